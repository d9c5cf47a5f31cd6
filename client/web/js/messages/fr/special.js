export default {
  "special.grrSpecial": "Votre appareil enverra {answer} avec une probabilité de {p}, sinon l’une des {others} autres valeurs (votre réponse, « je ne sais pas » et semblables parmi elles), chacune avec une probabilité de {q}. Le serveur ne peut pas savoir ce qui s’est passé.",
  "special.statusAnswer": "« une réponse »",
  "special.statusNumber": "Votre appareil enverra l’état « une réponse » avec une probabilité de {p}, sinon l’un de {values}, chacun avec une probabilité de {q} ; et votre nombre avec un bruit aléatoire ajouté : {x} lui-même avec une probabilité de {same}, {below} ou {above} avec une probabilité de {next}, un nombre plus éloigné avec une probabilité de {further} (chaque pas de plus est {step} moins probable que le précédent). Le nombre envoyé peut être inférieur à {min} ou supérieur à {max} : c’est le bruit, comme prévu.",
  "special.statusSpecial": "Votre appareil enverra l’état {answer} avec une probabilité de {p}, sinon l’un de {values}, chacun avec une probabilité de {q} ; et le nombre {middle} (le milieu de {min} à {max}, à la place d’une réponse) avec un bruit aléatoire ajouté, comme pour toute réponse.",
  "special.statusReport": "l’état {status} et le nombre {n}"
};
