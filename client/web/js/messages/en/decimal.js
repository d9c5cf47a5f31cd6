export default {
  "decimal.label": "A number from {min} to {max} (kept to the nearest {resolution})",
  "decimal.notNumber": "Please enter a number, such as {example}.",
  "decimal.separators": "Please enter the number without separators between thousands, such as {example}.",
  "decimal.range": "Please enter a number from {min} to {max}.",
  "decimal.describe": "Your device will send a number between {low} and {high} that depends on your answer.",
  "decimal.geometric": "Your device adds random noise to your number: it stays unchanged with probability {p}; small changes ({resolution} up or down) are likelier than large ones, each further step {step} less likely than the one before.",
  "decimal.pair": "Your answer is sent twice, randomized each time on its own. For the average: {mean} For the distribution: {distribution}",
  "decimal.numbers": "the numbers {mean} (for the average) and {distribution} (for the distribution)",
  "decimal.asked": "your device sends a randomized yes/no for whether you were asked, and a randomized version of your number, so no single report reveals either",
  "decimal.askedNumber": "‘asked’ and the number {n}",
  "decimal.notAskedNumber": "‘not asked’ and the number {n}"
};
