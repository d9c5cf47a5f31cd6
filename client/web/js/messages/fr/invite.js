export default {
  "invite.label": "Code d'invitation",
  "invite.enter": "Le code de votre invitation (il commence par « inv_ »)",
  "invite.hint": "Cette enquête n'accepte que les réponses des personnes invitées. Si votre invitation est arrivée sous forme de lien, ouvrir ce lien apporte le code avec lui.",
  "invite.fromLink": "Vous avez ouvert cette enquête depuis le lien de votre invitation : son code sera envoyé avec vos réponses.",
  "invite.why": "Le code garantit que chaque invitation ne reçoit qu'une seule réponse. Qui a envoyé les invitations peut savoir de quelle invitation vient cette réponse ; {mode, select, two {le partage de vos réponses entre les deux organisations les protège tout autant} other {la randomisation de vos réponses sur cet appareil les protège tout autant}}.",
  "invite.required": "Veuillez saisir le code de votre invitation.",
  "invite.malformed": "Ce n'est pas un code d'invitation : un code commence par « inv_ » et ne contient pas d'espace. Veuillez le vérifier sur votre invitation.",
  "invite.review": "Envoyé avec votre code d'invitation {code}.",
  "invite.receipt": "Votre code d'invitation accompagne ces octets (sous le nom « invite ») ; cet appareil ne le garde que jusqu'à ce que le serveur en ait accusé réception.",
  "invite.title": "Votre code d'invitation n'a pas été accepté",
  "invite.unknown": "Le serveur de l'enquête ne connaît pas ce code d'invitation. Veuillez le vérifier sur votre invitation et le saisir à nouveau.",
  "invite.used": "Ce code d'invitation a déjà servi à répondre à cette enquête, peut-être sur un autre appareil. Si vous avez un autre code, saisissez-le ici.",
  "invite.missing": "Cette enquête n'accepte que les réponses des personnes invitées : veuillez saisir le code de votre invitation.",
  "invite.refused": "Le serveur de l'enquête n'a pas accepté le code d'invitation ({error}).",
  "invite.kept": "{mode, select, two {Vos réponses sont conservées sur cet appareil telles qu'elles ont été partagées et scellées : elles seront envoyées telles quelles avec le code que vous saisirez, sans jamais être partagées à nouveau.} other {Vos réponses sont conservées sur cet appareil telles qu'elles ont été randomisées : elles seront envoyées telles quelles avec le code que vous saisirez, sans jamais être randomisées à nouveau.}}",
  "invite.send": "Envoyer avec ce code"
};
