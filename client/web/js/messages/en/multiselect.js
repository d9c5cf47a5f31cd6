export default {
  "multi.none": "None of the options",
  "multi.how": "Check all that apply.",
  "multi.howMost": "Check all that apply, at most {m}.",
  "multi.least": "Check at least one.",
  "multi.limit": "You can check at most {m} of these options: uncheck one first.",
  "multi.tooMany": "Please check at most {m} of these options.",
  "multi.atLeastOne": "Please check at least one option.",
  "multi.bits": "Your device sets one yes/no mark for each of the {k} options, each drawn on its own: ‘yes’ with probability {p} for an option you checked, {q} for one you did not.",
  "multi.marks": "Your device will send a yes/no mark for each of the {k} options, each drawn on its own: {checked, plural, =0 {} =1 {‘yes’ with probability {p} for the option you checked} other {‘yes’ with probability {p} for each of the # options you checked}}{both, select, yes {, and } other {}}{unchecked, plural, =0 {} =1 {‘yes’ with probability {q} for the option you did not check} other {‘yes’ with probability {q} for each of the # options you did not check}}.",
  "multi.items": "{checked, plural, =0 {} one {# option you checked} other {# options you checked}}{both, select, yes { and } other {}}{blanks, plural, =0 {} one {# blank} other {# blanks}}",
  "multi.blank": "a blank",
  "multi.psfoGrr": "Your device fills your answer up to {pad, plural, one {# item} other {# items}} with blanks and sends one item out of the {k} options and {blanks, plural, one {# blank} other {# blanks}}: each of yours with probability {p}, each other one with probability {q}.",
  "multi.psfoGrrYours": "Your device will send one item out of the {k} options and {blanks, plural, one {# blank} other {# blanks}}: {items} with probability {p} each, any other item with probability {q} each. The server cannot tell whether the item sent is one of yours.",
  "multi.psfoOlh": "Your device fills your answer up to {pad, plural, one {# item} other {# items}} with blanks, takes one at random, and sends a random code that sorts the {k} options and {blanks, plural, one {# blank} other {# blanks}} into {g} buckets with that item’s bucket with probability {p}, otherwise with one of the other {others} buckets picked at random.",
  "multi.psfoOlhYours": "Your device will take one item at random out of your answer filled up to {pad, plural, one {# item} other {# items}} ({items}), pick a random code that sorts the {k} options and {blanks, plural, one {# blank} other {# blanks}} into {g} buckets, and send the code with that item’s bucket with probability {p}, otherwise with one of the other {others} buckets picked at random. Many items share each bucket."
};
