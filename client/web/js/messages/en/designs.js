export default {
  "design.warner": "Warner's randomized response",
  "design.crosswise": "the crosswise model",
  "design.forcedResponse": "forced response",
  "design.unrelatedQuestion": "the unrelated-question design",
  "design.matrix": "a randomized-response design",
  "design.differ": "‘differ’",
  "design.same": "‘same’",
  "design.report": "report {n}",
  "design.chance": "{report} {p}",
  "design.chanceYours": "{report} (your real answer) {p}",
  "design.chances": "Your device will send one of these at random ({design}): {chances}.",
  "design.general": "Your device draws what it sends at random, with chances that depend on your answer: {cases}. The server cannot tell which answer gave the report.",
  "design.case": "if your answer is {answer}, {chances}"
};
