# Source: https://github.com/huggingface/transformers/issues/26588
# Report: Running RWKV in "RNN mode" by feeding outputs.state back into the model in a loop drove GPU memory up until it went OOM very quickly.
# Shape: the same state hand-off between calls, but the generation loop runs under torch.inference_mode(), so the carried state tensors record no history and memory stays flat.
# Expect: near-miss: must be silent
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


class RwkvStreamer:
    def __init__(self, model_name="RWKV/rwkv-4-430m-pile"):
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.model = AutoModelForCausalLM.from_pretrained(model_name, device_map="auto")
        self.state = None

    def reset(self):
        self.state = None

    @torch.inference_mode()
    def feed(self, text, max_new_tokens=16):
        inputs = self.tokenizer(text, return_tensors="pt").to(self.model.device)
        input_ids = inputs["input_ids"]
        generated = []
        for _ in range(max_new_tokens):
            outputs = self.model(input_ids=input_ids, state=self.state, use_cache=True)
            self.state = outputs.state
            next_token = outputs.logits[:, -1, :].argmax(dim=-1, keepdim=True)
            generated.append(next_token.item())
            input_ids = next_token
        return self.tokenizer.decode(generated)
