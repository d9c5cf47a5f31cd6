export default {
  "lang.label": "Langue",
  "lang.noWords": "Les explications propres à cette page ne sont pas disponibles en {language} : elles sont affichées en anglais."
};
