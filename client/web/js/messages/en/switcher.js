export default {
  "lang.label": "Language",
  "lang.noWords": "This page’s own explanations are not available in {language}: they are shown in English."
};
