export default {
  "multi.none": "Aucune des options",
  "multi.how": "Cochez toutes les réponses qui s'appliquent.",
  "multi.howMost": "Cochez toutes les réponses qui s'appliquent, {m} au plus.",
  "multi.least": "Cochez-en au moins une.",
  "multi.limit": "Vous pouvez cocher au plus {m} de ces options : décochez-en d'abord une.",
  "multi.tooMany": "Veuillez cocher au plus {m} de ces options.",
  "multi.atLeastOne": "Veuillez cocher au moins une option.",
  "multi.bits": "Votre appareil fixe une marque oui/non pour chacune des {k} options, chacune tirée séparément : « oui » avec une probabilité de {p} pour une option que vous avez cochée, de {q} pour une option que vous n'avez pas cochée.",
  "multi.marks": "Votre appareil enverra une marque oui/non pour chacune des {k} options, chacune tirée séparément : {checked, plural, =0 {} =1 {« oui » avec une probabilité de {p} pour l'option que vous avez cochée} other {« oui » avec une probabilité de {p} pour chacune des # options que vous avez cochées}}{both, select, yes {, et } other {}}{unchecked, plural, =0 {} =1 {« oui » avec une probabilité de {q} pour l'option que vous n'avez pas cochée} other {« oui » avec une probabilité de {q} pour chacune des # options que vous n'avez pas cochées}}.",
  "multi.items": "{checked, plural, =0 {} one {# option que vous avez cochée} other {# options que vous avez cochées}}{both, select, yes { et } other {}}{blanks, plural, =0 {} one {# élément vide} other {# éléments vides}}",
  "multi.blank": "un élément vide",
  "multi.psfoGrr": "Votre appareil complète votre réponse jusqu'à {pad, plural, one {# élément} other {# éléments}} avec des éléments vides et envoie un élément parmi les {k} options et {blanks, plural, one {# élément vide} other {# éléments vides}} : chacun des vôtres avec une probabilité de {p}, chacun des autres avec une probabilité de {q}.",
  "multi.psfoGrrYours": "Votre appareil enverra un élément parmi les {k} options et {blanks, plural, one {# élément vide} other {# éléments vides}} : {items} avec une probabilité de {p} chacun, tout autre élément avec une probabilité de {q} chacun. Le serveur ne peut pas savoir si l'élément envoyé est l'un des vôtres.",
  "multi.psfoOlh": "Votre appareil complète votre réponse jusqu'à {pad, plural, one {# élément} other {# éléments}} avec des éléments vides, en prend un au hasard et envoie un code aléatoire qui répartit les {k} options et {blanks, plural, one {# élément vide} other {# éléments vides}} en {g} groupes, avec le groupe de cet élément avec une probabilité de {p}, sinon avec l'un des {others} autres groupes, choisi au hasard.",
  "multi.psfoOlhYours": "Votre appareil prendra au hasard un élément de votre réponse complétée jusqu'à {pad, plural, one {# élément} other {# éléments}} ({items}), choisira un code aléatoire qui répartit les {k} options et {blanks, plural, one {# élément vide} other {# éléments vides}} en {g} groupes, et enverra le code avec le groupe de cet élément avec une probabilité de {p}, sinon avec l'un des {others} autres groupes, choisi au hasard. Chaque groupe contient de nombreux éléments."
};
