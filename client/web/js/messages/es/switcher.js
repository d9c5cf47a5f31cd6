export default {
  "lang.label": "Idioma",
  "lang.noWords": "Las explicaciones propias de esta página no están disponibles en {language}: se muestran en inglés."
};
