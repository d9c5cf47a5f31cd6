export default {
  "privacy.disclosed": "Su privacidad: su dispositivo aleatoriza cada respuesta antes de enviarla, {count, plural, one {salvo la pregunta revelada, que se envía tal como la responde. En cuanto a las demás} other {salvo las # preguntas reveladas, que se envían tal como las responde. En cuanto a las demás}}, {odds}, aunque responda a todas las preguntas.",
  "review.introDisclosed": "Todavía no se ha aleatorizado nada. Cuando pulse Enviar, su dispositivo aleatorizará cada respuesta una sola vez, guardará el resultado y enviará solo eso; sus respuestas reales nunca salen de este dispositivo, salvo las reveladas, que se envían tal como las responde.",
  "form.carried": "No se pregunta: su invitación lleva este valor de su entrevista de la encuesta principal, {value}. Se envía tal cual, sin aleatorizar (el servidor de la encuesta ya lo tiene con su invitación).",
  "form.carriedMissing": "Esta encuesta toma {names} de su invitación (un valor de su entrevista de la encuesta principal), y esta página no tiene ninguna invitación que lo lleve: abra la encuesta desde el enlace de su invitación.",
  "form.disclosed": "Revelada: se envía tal como la responde, sin aleatorizar. No gasta ε, pero puede ayudar a identificarle.",
  "mech.disclosed": "Revelada: se envía tal como la responde, sin aleatorizar. El servidor ve esta respuesta tal como la da.",
  "review.mineDisclosed": "Su respuesta (se envía tal como la da): {answer}",
  "review.disclosedCost": "Revelada: no gasta ε, porque no se aleatoriza; puede ayudar a identificarle.",
  "review.sentDisclosed": "{sent, select, yes {Enviada tal como la dio, sin aleatorizar: {report}} other {Se enviará tal como la dio, sin aleatorizar: {report}}}"
};
