export default {
  "loc.cellText": "Fila {r}, columna {c}",
  "loc.cellRegions": "Fila {r}, columna {c} ({regions})",
  "loc.none": "Todavía no ha elegido ninguna celda.",
  "loc.map": "Mapa de {rows} filas por {cols} columnas; cada celda mide {km} km de lado. Las flechas mueven la selección; Intro o la barra espaciadora eligen la celda.",
  "loc.picked": "Elegida: {cell}.",
  "loc.scroll": "El mapa es más grande que la pantalla: desplácelo hacia los lados y hacia abajo para verlo entero.",
  "loc.regions": "Regiones de este mapa (el nombre de cada celda indica en cuáles está); ir a:",
  "loc.pick": "Elija una celda del mapa, por favor.",
  "loc.describe": "Su dispositivo enviará una celda cercana a la suya (quizá la suya): a no más de {radius} km de ella con una probabilidad del {p} (su propia celda con una probabilidad del {own}). Un informe es, como mucho, e^({geo}·d) veces más probable desde un lugar que desde otro situado a d km (ε_geo = {geo} por km).",
  "loc.cell": "la celda de la fila {r}, columna {c}"
};
