export default {
  "multi.none": "None of the options",
  "multi.how": "Check all that apply.",
  "multi.howMost": "Check all that apply, at most {m}.",
  "multi.least": "Check at least one.",
  "multi.limit": "You can check at most {m} of these options: uncheck one first.",
  "multi.tooMany": "Please check at most {m} of these options.",
  "multi.atLeastOne": "Please check at least one option.",
  "multi.alone": "\"{option}\" can only be checked alone.",
  "multi.items": "{checked, plural, =0 {} one {# option you checked} other {# options you checked}}{both, select, yes { and } other {}}{blanks, plural, =0 {} one {# blank} other {# blanks}}",
  "multi.blank": "a blank",
  "multi.psfoGrr": "Your device fills your answer up to {pad, plural, one {# item} other {# items}} with blanks and sends one item out of the {k} options and {blanks, plural, one {# blank} other {# blanks}}: each of yours with probability {p}, each other one with probability {q}.",
  "multi.psfoGrrYours": "Your device will send one item out of the {k} options and {blanks, plural, one {# blank} other {# blanks}}: {items} with probability {p} each, any other item with probability {q} each. The server cannot tell whether the item sent is one of yours."
};
