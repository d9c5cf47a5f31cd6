export default {
  "design.warner": "la réponse randomisée de Warner",
  "design.crosswise": "le modèle croisé",
  "design.forcedResponse": "la réponse forcée",
  "design.unrelatedQuestion": "le plan à question sans rapport",
  "design.matrix": "un plan de réponse randomisée",
  "design.differ": "« différentes »",
  "design.same": "« identiques »",
  "design.report": "rapport {n}",
  "design.chance": "{report} {p}",
  "design.chanceYours": "{report} (votre vraie réponse) {p}",
  "design.chances": "Votre appareil enverra au hasard l'une de ces possibilités ({design}) : {chances}.",
  "design.general": "Votre appareil tire au hasard ce qu'il envoie, avec des probabilités qui dépendent de votre réponse : {cases}. Le serveur ne peut pas savoir quelle réponse a produit le rapport.",
  "design.case": "si votre réponse est {answer}, {chances}"
};
