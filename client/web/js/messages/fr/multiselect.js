export default {
  "multi.none": "Aucune des options",
  "multi.how": "Cochez toutes les réponses qui s'appliquent.",
  "multi.howMost": "Cochez toutes les réponses qui s'appliquent, {m} au plus.",
  "multi.least": "Cochez-en au moins une.",
  "multi.limit": "Vous pouvez cocher au plus {m} de ces options : décochez-en d'abord une.",
  "multi.tooMany": "Veuillez cocher au plus {m} de ces options.",
  "multi.atLeastOne": "Veuillez cocher au moins une option.",
  "multi.alone": "« {option} » ne peut être cochée que seule.",
  "multi.items": "{checked, plural, =0 {} one {# option que vous avez cochée} other {# options que vous avez cochées}}{both, select, yes { et } other {}}{blanks, plural, =0 {} one {# élément vide} other {# éléments vides}}",
  "multi.blank": "un élément vide",
  "multi.psfoGrr": "Votre appareil complète votre réponse jusqu'à {pad, plural, one {# élément} other {# éléments}} avec des éléments vides et envoie un élément parmi les {k} options et {blanks, plural, one {# élément vide} other {# éléments vides}} : chacun des vôtres avec une probabilité de {p}, chacun des autres avec une probabilité de {q}.",
  "multi.psfoGrrYours": "Votre appareil enverra un élément parmi les {k} options et {blanks, plural, one {# élément vide} other {# éléments vides}} : {items} avec une probabilité de {p} chacun, tout autre élément avec une probabilité de {q} chacun. Le serveur ne peut pas savoir si l'élément envoyé est l'un des vôtres."
};
