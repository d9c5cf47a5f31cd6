export default {
  "decimal.label": "Un nombre de {min} à {max} (arrondi à {resolution} près)",
  "decimal.notNumber": "Veuillez saisir un nombre, par exemple {example}.",
  "decimal.separators": "Veuillez saisir le nombre sans séparateur de milliers, par exemple {example}.",
  "decimal.range": "Veuillez saisir un nombre de {min} à {max}.",
  "decimal.describe": "Votre appareil enverra un nombre entre {low} et {high} qui dépend de votre réponse.",
  "decimal.geometric": "Votre appareil ajoute un bruit aléatoire à votre nombre : il reste inchangé avec une probabilité de {p} ; les petits changements ({resolution} de plus ou de moins) sont plus probables que les grands, chaque pas supplémentaire étant {step} moins probable que le précédent.",
  "decimal.pair": "Votre réponse est envoyée deux fois, rendue aléatoire chaque fois séparément. Pour la moyenne : {mean} Pour la distribution : {distribution}",
  "decimal.numbers": "les nombres {mean} (pour la moyenne) et {distribution} (pour la distribution)",
  "decimal.asked": "votre appareil envoie un oui/non aléatoire indiquant si la question vous a été posée, et une version aléatoire de votre nombre, si bien qu’aucun rapport seul ne révèle l’un ou l’autre",
  "decimal.askedNumber": "‘posée’ et le nombre {n}",
  "decimal.notAskedNumber": "‘non posée’ et le nombre {n}"
};
