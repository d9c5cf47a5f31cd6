export default {
  "invite.label": "Invitation code",
  "invite.enter": "The code from your invitation (it begins with “inv_”)",
  "invite.hint": "This survey accepts only invited answers. If your invitation came as a link, opening that link brings the code with it.",
  "invite.fromLink": "You opened this survey from your invitation link: its code will be sent with your answers.",
  "invite.why": "The code makes sure that each invitation is answered only once. Whoever sent the invitations can tell which invitation this response came with; {mode, select, two {splitting your answers between the two organizations protects them all the same} other {randomizing your answers on this device protects them all the same}}.",
  "invite.required": "Please enter the code from your invitation.",
  "invite.malformed": "This is not an invitation code: a code begins with “inv_” and has no spaces. Please check it against your invitation.",
  "invite.review": "Sent with your invitation code {code}.",
  "invite.receipt": "Your invitation code goes beside these bytes (as “invite”); this device keeps it only until the server has acknowledged them.",
  "invite.title": "Your invitation code was not accepted",
  "invite.unknown": "The survey server does not know this invitation code. Please check it against your invitation and enter it again.",
  "invite.used": "This invitation code has already been used to answer this survey, perhaps on another device. If you have another code, enter it here.",
  "invite.missing": "This survey accepts only invited answers: please enter the code from your invitation.",
  "invite.refused": "The survey server did not accept the invitation code ({error}).",
  "invite.kept": "{mode, select, two {Your answers are kept on this device exactly as they were split and sealed: they will be sent as they are with the code you enter, never split again.} other {Your answers are kept on this device exactly as they were randomized: they will be sent as they are with the code you enter, never randomized again.}}",
  "invite.send": "Send with this code"
};
