# Source: https://github.com/huggingface/transformers/issues/26588
# Report: running RWKV in "RNN mode" - calling the model in an endless loop and passing the returned state back in on every call - made GPU memory grow without bound until it went OOM "very quickly".
# Shape: the same streaming loop, but every step runs under torch.no_grad(), so the recurrent state fed back into the next call is a plain fixed-size tensor list and nothing chains from step to step.
# Expect: near-miss: must be silent
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL_NAME = "RWKV/rwkv-4-430m-pile"
PROMPT = "Lorem ipsum dolor sit amet, consectetur adipiscing elit."


def stream_forever(model, tokenizer, text, report_every=50):
    state = None
    step = 0
    while True:
        inputs = tokenizer(text, return_tensors="pt").to(model.device)
        with torch.no_grad():
            outputs = model(**inputs, state=state, use_cache=True)
        state = outputs.state
        next_id = int(outputs.logits[0, -1].argmax())
        text = tokenizer.decode([next_id])
        step += 1
        if step % report_every == 0:
            used = torch.cuda.memory_allocated() / 2**20
            print(f"step {step}: {used:.0f} MiB allocated, last token {text!r}")
        time.sleep(0.01)


if __name__ == "__main__":
    tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)
    model = AutoModelForCausalLM.from_pretrained(
        MODEL_NAME, output_hidden_states=True, device_map="auto")
    model.eval()
    stream_forever(model, tokenizer, PROMPT)
