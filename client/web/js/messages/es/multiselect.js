export default {
  "multi.none": "Ninguna de las opciones",
  "multi.how": "Marque todas las que correspondan.",
  "multi.howMost": "Marque todas las que correspondan, como máximo {m}.",
  "multi.least": "Marque al menos una.",
  "multi.limit": "Puede marcar como máximo {m} de estas opciones: desmarque una primero.",
  "multi.tooMany": "Marque como máximo {m} de estas opciones, por favor.",
  "multi.atLeastOne": "Marque al menos una opción, por favor.",
  "multi.bits": "Su dispositivo pone una marca de sí o no para cada una de las {k} opciones, cada una sorteada por separado: «sí» con una probabilidad del {p} para una opción que marcó, y del {q} para una que no marcó.",
  "multi.marks": "Su dispositivo enviará una marca de sí o no para cada una de las {k} opciones, cada una sorteada por separado: {checked, plural, =0 {} =1 {«sí» con una probabilidad del {p} para la opción que marcó} other {«sí» con una probabilidad del {p} para cada una de las # opciones que marcó}}{both, select, yes {, y } other {}}{unchecked, plural, =0 {} =1 {«sí» con una probabilidad del {q} para la opción que no marcó} other {«sí» con una probabilidad del {q} para cada una de las # opciones que no marcó}}.",
  "multi.items": "{checked, plural, =0 {} one {# opción que marcó} other {# opciones que marcó}}{both, select, yes { y } other {}}{blanks, plural, =0 {} one {# elemento en blanco} other {# elementos en blanco}}",
  "multi.blank": "un elemento en blanco",
  "multi.psfoGrr": "Su dispositivo completa su respuesta hasta {pad, plural, one {# elemento} other {# elementos}} con elementos en blanco y envía un elemento de entre las {k} opciones y {blanks, plural, one {# elemento en blanco} other {# elementos en blanco}}: cada uno de los suyos con una probabilidad del {p}, y cada uno de los demás con una probabilidad del {q}.",
  "multi.psfoGrrYours": "Su dispositivo enviará un elemento de entre las {k} opciones y {blanks, plural, one {# elemento en blanco} other {# elementos en blanco}}: {items}, con una probabilidad del {p} cada uno, y cualquier otro elemento con una probabilidad del {q} cada uno. El servidor no puede saber si el elemento enviado es uno de los suyos.",
  "multi.psfoOlh": "Su dispositivo completa su respuesta hasta {pad, plural, one {# elemento} other {# elementos}} con elementos en blanco, toma uno al azar y envía un código aleatorio que reparte las {k} opciones y {blanks, plural, one {# elemento en blanco} other {# elementos en blanco}} en {g} grupos, junto con el grupo de ese elemento con una probabilidad del {p}; si no, con uno de los otros {others} grupos elegido al azar.",
  "multi.psfoOlhYours": "Su dispositivo tomará al azar un elemento de su respuesta completada hasta {pad, plural, one {# elemento} other {# elementos}} ({items}), elegirá un código aleatorio que reparte las {k} opciones y {blanks, plural, one {# elemento en blanco} other {# elementos en blanco}} en {g} grupos, y enviará el código junto con el grupo de ese elemento con una probabilidad del {p}; si no, con uno de los otros {others} grupos elegido al azar. Muchos elementos comparten cada grupo."
};
