export default {
  "loc.cellText": "Ligne {r}, colonne {c}",
  "loc.cellRegions": "Ligne {r}, colonne {c} ({regions})",
  "loc.none": "Aucune case choisie pour l'instant.",
  "loc.map": "Carte de {rows} lignes sur {cols} colonnes, chaque case mesurant {km} km de côté. Les flèches déplacent la sélection, Entrée ou Espace choisit la case.",
  "loc.picked": "Choisie : {cell}.",
  "loc.scroll": "La carte est plus grande que l'écran : faites-la défiler sur le côté et vers le bas pour la voir en entier.",
  "loc.regions": "Régions de cette carte (le nom de chaque case indique celles qui la contiennent) ; aller à :",
  "loc.pick": "Veuillez choisir une case sur la carte.",
  "loc.describe": "Votre appareil enverra une case proche de la vôtre (peut-être la vôtre) : à au plus {radius} km d'elle avec une probabilité de {p} (votre propre case avec une probabilité de {own}). Un rapport est au plus e^({geo}·d) fois plus probable depuis un lieu que depuis un autre situé à d km (ε_geo = {geo} par km).",
  "loc.cell": "la case de la ligne {r}, colonne {c}"
};
