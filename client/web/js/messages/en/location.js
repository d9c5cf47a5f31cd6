export default {
  "loc.cellText": "Row {r}, column {c}",
  "loc.cellRegions": "Row {r}, column {c} ({regions})",
  "loc.none": "No cell picked yet.",
  "loc.map": "Map of {rows} rows by {cols} columns, each cell {km} km across. Arrow keys move, Enter or Space picks.",
  "loc.picked": "Picked: {cell}.",
  "loc.scroll": "The map is larger than the screen: scroll it sideways and down to see all of it.",
  "loc.regions": "Regions on this map (each cell's name says which hold it); go to:",
  "loc.pick": "Please pick a cell on the map.",
  "loc.describe": "Your device will send a cell near yours (possibly yours): within {radius} km of it with probability {p} (your own cell with probability {own}). A report is at most e^({geo}·d) times likelier from one place than from another d km away (ε_geo = {geo} per km).",
  "loc.cell": "the cell in row {r}, column {c}"
};
