export default {
  "privacy.disclosed": "Votre confidentialité : votre appareil randomise chaque réponse avant de l'envoyer, {count, plural, one {sauf la question divulguée, envoyée telle que vous y répondez. Pour les autres} other {sauf les # questions divulguées, envoyées telles que vous y répondez. Pour les autres}}, {odds}, même si vous répondez à toutes les questions.",
  "review.introDisclosed": "Rien n'a encore été randomisé. Quand vous appuierez sur Envoyer, votre appareil randomisera chaque réponse une seule fois, gardera le résultat et n'enverra que celui-ci ; vos vraies réponses ne quittent jamais cet appareil, sauf les réponses divulguées, envoyées telles que vous les donnez.",
  "form.carried": "Non posée : votre invitation porte cette valeur de votre entretien de l’enquête principale, {value}. Elle est envoyée telle quelle, sans randomisation (le serveur de l’enquête la détient déjà avec votre invitation).",
  "form.carriedMissing": "Cette enquête prend {names} de votre invitation (une valeur de votre entretien de l’enquête principale), et cette page n’a aucune invitation qui la porte : ouvrez l’enquête depuis le lien de votre invitation.",
  "form.disclosed": "Divulguée : envoyée telle que vous y répondez, sans randomisation. Elle ne coûte aucun ε, mais elle peut aider à vous identifier.",
  "mech.disclosed": "Divulguée : envoyée telle que vous y répondez, sans randomisation. Le serveur voit cette réponse telle que vous la donnez.",
  "review.mineDisclosed": "Votre réponse (envoyée telle que vous la donnez) : {answer}",
  "review.disclosedCost": "Divulguée : aucun ε, car elle n'est pas randomisée ; elle peut aider à vous identifier.",
  "review.sentDisclosed": "{sent, select, yes {Envoyée telle que vous l'avez donnée, sans randomisation : {report}} other {Sera envoyée telle que vous l'avez donnée, sans randomisation : {report}}}"
};
