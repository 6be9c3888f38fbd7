# Source: https://github.com/EleutherAI/elk/pull/130
# Report: extract_hiddens ran the LM over every prompt/answer pair with output_hidden_states=True but without torch.no_grad, so each forward saved activations for a backward that never came; fixed by decorating it with @torch.no_grad() (commit d50876e0382e8229fc3912b15a605395b05499f1 adds the decorator to elk/extraction/extraction.py)
# Shape: generator that loads AutoModel (eval mode), loops prompts -> variants -> answers, runs the forward with grad enabled, reduces the hidden states and yields int16 copies per prompt
# Expect: TML003 line 39
from typing import Iterable, Union

import torch
from transformers import AutoModel, AutoTokenizer

from ..utils import float32_to_int16
from .prompt_dataset import PromptDataset


def extract_hiddens(cfg, *, device: Union[str, torch.device] = "cpu", rank: int = 0,
                    split: str, world_size: int = 1) -> Iterable[dict]:
    """Run inference on a model with a set of prompts, yielding the hidden states."""
    prompt_ds = PromptDataset(cfg.prompts, rank, world_size, split)
    model = AutoModel.from_pretrained(cfg.model, torch_dtype="auto").to(device)
    model.eval()  # from_pretrained already returns eval mode; made explicit
    tokenizer = AutoTokenizer.from_pretrained(cfg.model, truncation_side="left")
    if not tokenizer.pad_token:
        tokenizer.pad_token = tokenizer.eos_token
    num_choices = prompt_ds.num_classes
    sep_token = tokenizer.sep_token or "\n"
    layer_indices = cfg.layers or tuple(range(model.config.num_hidden_layers))

    def tokenize(prompt, idx):
        return tokenizer([prompt.to_string(idx, sep=sep_token)], padding=True,
                         return_tensors="pt", truncation=True).to(device)

    for prompts in prompt_ds:
        hidden_dict = {
            f"hidden_{layer_idx}": torch.empty(prompt_ds.num_variants, num_choices,
                                               model.config.hidden_size, device=device, dtype=torch.int16)
            for layer_idx in layer_indices
        }
        for i, prompt in enumerate(prompts):
            for j in range(num_choices):
                outputs = model(**tokenize(prompt, j), output_hidden_states=True)  # expect: TML003
                hiddens = outputs.get("decoder_hidden_states") or outputs["hidden_states"]
                hiddens = [hiddens[1:][k] for k in layer_indices]
                if cfg.token_loc == "first":
                    hiddens = [h[..., 0, :] for h in hiddens]
                elif cfg.token_loc == "last":
                    hiddens = [h[..., -1, :] for h in hiddens]
                else:
                    hiddens = [h.mean(dim=-2) for h in hiddens]
                for layer_idx, hidden in zip(layer_indices, hiddens):
                    hidden_dict[f"hidden_{layer_idx}"][i, j] = float32_to_int16(hidden)

        yield dict(
            label=prompts[0].label,
            variant_ids=[prompt.template_name for prompt in prompts],
            **hidden_dict,
        )
