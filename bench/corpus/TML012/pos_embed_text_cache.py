# Modelled on: https://github.com/meta-pytorch/botorch/pull/1650
# Report: "Don't use functools.lru_cache on methods": it can cause memory leaks.
from functools import lru_cache

import torch


class PromptEncoder:
    def __init__(self, tokenizer, text_model):
        self.tokenizer = tokenizer
        self.text_model = text_model

    @lru_cache(maxsize=1024)  # expect: TML012
    def encode(self, prompt: str) -> torch.Tensor:
        ids = self.tokenizer(prompt, return_tensors="pt").input_ids.cuda()
        with torch.no_grad():
            return self.text_model(ids).last_hidden_state
