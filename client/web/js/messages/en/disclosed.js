export default {
  "privacy.disclosed": "Your privacy: your device randomizes every answer before sending it, {count, plural, one {except the disclosed one, which is sent as you give it. About the others} other {except the # disclosed ones, which are sent as you give them. About the others}}, {odds}, even if you answer every question.",
  "review.introDisclosed": "Nothing has been randomized yet. When you press Send, your device randomizes each answer once, keeps the result, and sends only that; your true answers never leave this device, except the disclosed ones, which are sent as you give them.",
  "form.carried": "Not asked: your invitation carries this value from your interview in the main survey, {value}. It is sent as it is, not randomized (the survey server already holds it with your invitation).",
  "form.carriedMissing": "This survey takes {names} from your invitation (a value of your interview in the main survey), and this page has no invitation that carries it: open the survey from your invitation link.",
  "form.disclosed": "Disclosed: sent as you answer it, not randomized. It costs no ε, but it can help identify you.",
  "mech.disclosed": "Disclosed: sent as you answer it, not randomized. The server sees this answer as you give it.",
  "review.mineDisclosed": "Your answer (sent as you give it): {answer}",
  "review.disclosedCost": "Disclosed: no ε, because it is not randomized; it can help identify you.",
  "review.sentDisclosed": "{sent, select, yes {Sent as you gave it, not randomized: {report}} other {Will be sent as you gave it, not randomized: {report}}}"
};
