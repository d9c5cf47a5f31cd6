export default {
  "decimal.label": "Un número de {min} a {max} (redondeado a {resolution})",
  "decimal.notNumber": "Escriba un número, por ejemplo {example}, por favor.",
  "decimal.separators": "Escriba el número sin separadores de miles, por ejemplo {example}, por favor.",
  "decimal.range": "Escriba un número de {min} a {max}, por favor.",
  "decimal.describe": "Su dispositivo enviará un número entre {low} y {high} que depende de su respuesta.",
  "decimal.geometric": "Su dispositivo añade ruido aleatorio a su número: queda igual con una probabilidad del {p}; los cambios pequeños ({resolution} arriba o abajo) son más probables que los grandes, y cada paso más lejos es {step} menos probable que el anterior.",
  "decimal.pair": "Su respuesta se envía dos veces, aleatorizada cada vez por separado. Para el promedio: {mean} Para la distribución: {distribution}",
  "decimal.numbers": "los números {mean} (para el promedio) y {distribution} (para la distribución)",
  "decimal.asked": "su dispositivo envía un sí/no aleatorizado sobre si se le hizo la pregunta, y una versión aleatorizada de su número, así que ningún informe por sí solo revela ninguno de los dos",
  "decimal.askedNumber": "‘preguntado’ y el número {n}",
  "decimal.notAskedNumber": "‘no preguntado’ y el número {n}"
};
