export default {
  "multi.none": "Ninguna de las opciones",
  "multi.how": "Marque todas las que correspondan.",
  "multi.howMost": "Marque todas las que correspondan, como máximo {m}.",
  "multi.least": "Marque al menos una.",
  "multi.limit": "Puede marcar como máximo {m} de estas opciones: desmarque una primero.",
  "multi.tooMany": "Marque como máximo {m} de estas opciones, por favor.",
  "multi.atLeastOne": "Marque al menos una opción, por favor.",
  "multi.alone": "\"{option}\" solo puede marcarse sola.",
  "multi.items": "{checked, plural, =0 {} one {# opción que marcó} other {# opciones que marcó}}{both, select, yes { y } other {}}{blanks, plural, =0 {} one {# elemento en blanco} other {# elementos en blanco}}",
  "multi.blank": "un elemento en blanco",
  "multi.psfoGrr": "Su dispositivo completa su respuesta hasta {pad, plural, one {# elemento} other {# elementos}} con elementos en blanco y envía un elemento de entre las {k} opciones y {blanks, plural, one {# elemento en blanco} other {# elementos en blanco}}: cada uno de los suyos con una probabilidad del {p}, y cada uno de los demás con una probabilidad del {q}.",
  "multi.psfoGrrYours": "Su dispositivo enviará un elemento de entre las {k} opciones y {blanks, plural, one {# elemento en blanco} other {# elementos en blanco}}: {items}, con una probabilidad del {p} cada uno, y cualquier otro elemento con una probabilidad del {q} cada uno. El servidor no puede saber si el elemento enviado es uno de los suyos."
};
