# Source: https://github.com/er537/whisper_interpretability/blob/2151062d1f5a2dbe09df122945adbd1842fae3ea/whisper_interpretability/global_utils.py
# Report: Whisper interpretability tooling: BaseActivationModule caches a layer's activations with forward hooks; collect_activations.py runs it over every LibriSpeech/AM batch and saves the cached activations per utterance
# Shape: forward() registers the hooks, runs the decode, then remove_hooks() calls handle.remove() on every handle and empties self.hooks, so each batch leaves no hook behind; the hook stores output.detach().cpu()
# Expect: near-miss: must be silent
import os
import pathlib
from abc import ABC, abstractmethod
from datetime import date

import torch
import whisper

todays_date = date.today()
device = "cuda" if torch.cuda.is_available() else "cpu"
OUT_DIR = "/exp/whisper_activations_tiny"


class BaseActivationModule(ABC):
    def __init__(self, model, hook_fn=None, activations_to_cache=("all",)):
        self.model = model
        self.step = 0
        self.activations = {}
        self.hooks = []
        self.activations_to_cache = activations_to_cache
        self.hook_fn = hook_fn

    def forward(self, x):
        self.model.zero_grad()
        self.step += 1
        self.register_hooks()
        model_out = self.custom_forward(self.model, x)
        self.remove_hooks()
        return model_out

    def register_hooks(self):
        for name, module in self.model.named_modules():
            if name in self.activations_to_cache or self.activations_to_cache == "all":
                hook_fn = self.hook_fn if self.hook_fn is not None else self._get_caching_hook(name)
                forward_hook = module.register_forward_hook(hook_fn)
                self.hooks.append(forward_hook)

    def _get_caching_hook(self, name):
        def hook(module, input, output):
            self.activations[name] = output.detach().cpu()
        return hook

    def remove_hooks(self):
        for hook in self.hooks:
            hook.remove()
        self.hooks = []

    @abstractmethod
    def custom_forward(self, model, mels):
        raise NotImplementedError

    def reset_state(self):
        self.activations = {}


class WhisperActivationCache(BaseActivationModule):
    def __init__(self, model_name="tiny", activations_to_cache=("encoder.blocks.0",)):
        self.model = whisper.load_model(model_name).to(device)
        super().__init__(model=self.model, activations_to_cache=activations_to_cache)

    def custom_forward(self, model, mels):
        options = whisper.DecodingOptions(without_timestamps=False, fp16=(device == "cuda"))
        return model.decode(mels, options)


def get_activations(dataset, split="train", layer_to_cache="encoder.blocks.0"):
    actv_cache = WhisperActivationCache(activations_to_cache=[layer_to_cache])
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=100)
    for data, lang_codes, audio_paths in dataloader:
        actv_cache.reset_state()
        actv_cache.forward(data.to(device))
        layer_actvs = actv_cache.activations[layer_to_cache].to("cpu")
        out_dir = f"{OUT_DIR}/{split}/{layer_to_cache}"
        pathlib.Path(out_dir).mkdir(parents=True, exist_ok=True)
        for i, (lang_code, audio_path) in enumerate(zip(lang_codes, audio_paths)):
            stem = f"{os.path.basename(audio_path)}_{lang_code}"
            torch.save(layer_actvs[i], f"{out_dir}/{todays_date}_{stem}.pt")
