export default {
  "invite.label": "Código de invitación",
  "invite.enter": "El código de su invitación (empieza por «inv_»)",
  "invite.hint": "Esta encuesta solo admite respuestas de personas invitadas. Si su invitación llegó como enlace, al abrir ese enlace el código viene con él.",
  "invite.fromLink": "Abrió esta encuesta desde el enlace de su invitación: su código se enviará junto con sus respuestas.",
  "invite.why": "El código garantiza que cada invitación se responda una sola vez. Quien envió las invitaciones puede saber de qué invitación viene esta respuesta; {mode, select, two {el reparto de sus respuestas entre las dos organizaciones las protege igualmente} other {la aleatorización de sus respuestas en este dispositivo las protege igualmente}}.",
  "invite.required": "Escriba el código de su invitación, por favor.",
  "invite.malformed": "Esto no es un código de invitación: un código empieza por «inv_» y no tiene espacios. Compruébelo con su invitación, por favor.",
  "invite.review": "Se envía con su código de invitación {code}.",
  "invite.receipt": "Su código de invitación va junto a estos bytes (como «invite»); este dispositivo solo lo guarda hasta que el servidor confirme que los recibió.",
  "invite.title": "No se aceptó su código de invitación",
  "invite.unknown": "El servidor de la encuesta no conoce este código de invitación. Compruébelo con su invitación y vuelva a escribirlo.",
  "invite.used": "Este código de invitación ya se usó para responder a esta encuesta, quizá en otro dispositivo. Si tiene otro código, escríbalo aquí.",
  "invite.missing": "Esta encuesta solo admite respuestas de personas invitadas: escriba el código de su invitación, por favor.",
  "invite.refused": "El servidor de la encuesta no aceptó el código de invitación ({error}).",
  "invite.kept": "{mode, select, two {Sus respuestas se guardan en este dispositivo tal como se dividieron y sellaron: se enviarán tal cual con el código que escriba, sin volver a dividirlas.} other {Sus respuestas se guardan en este dispositivo tal como se aleatorizaron: se enviarán tal cual con el código que escriba, sin volver a aleatorizarlas.}}",
  "invite.send": "Enviar con este código"
};
