export default {
  "special.grrSpecial": "Your device will send {answer} with probability {p}, otherwise one of the other {others} values (your answer, ‘don’t know’ and the like among them), each with probability {q}. The server cannot tell which happened.",
  "special.statusAnswer": "‘an answer’",
  "special.statusNumber": "Your device will send the status ‘an answer’ with probability {p}, otherwise one of {values}, each with probability {q}; and your number with random noise added: {x} itself with probability {same}, {below} or {above} with probability {next}, a number further away with probability {further} (each further step is {step} less likely than the one before). The number sent can be below {min} or above {max}: that is the noise, as expected.",
  "special.statusSpecial": "Your device will send the status {answer} with probability {p}, otherwise one of {values}, each with probability {q}; and the number {middle} (the middle of {min} to {max}, standing in for an answer) with random noise added, as for any answer.",
  "special.statusReport": "the status {status} and the number {n}"
};
