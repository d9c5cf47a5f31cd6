export default {
  "special.grrSpecial": "Su dispositivo enviará {answer} con probabilidad {p}; si no, uno de los otros {others} valores (su respuesta, «no sé» y similares entre ellos), cada uno con probabilidad {q}. El servidor no puede saber qué ocurrió.",
  "special.statusAnswer": "«una respuesta»",
  "special.statusNumber": "Su dispositivo enviará el estado «una respuesta» con probabilidad {p}; si no, uno de {values}, cada uno con probabilidad {q}; y su número con ruido aleatorio añadido: {x} mismo con probabilidad {same}, {below} o {above} con probabilidad {next}, un número más lejano con probabilidad {further} (cada paso más lejos es {step} menos probable que el anterior). El número enviado puede quedar por debajo de {min} o por encima de {max}: es el ruido, como se espera.",
  "special.statusSpecial": "Su dispositivo enviará el estado {answer} con probabilidad {p}; si no, uno de {values}, cada uno con probabilidad {q}; y el número {middle} (la mitad de {min} a {max}, en lugar de una respuesta) con ruido aleatorio añadido, como para cualquier respuesta.",
  "special.statusReport": "el estado {status} y el número {n}"
};
