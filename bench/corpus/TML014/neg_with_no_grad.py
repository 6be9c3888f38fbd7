# Modelled on: https://github.com/kuprel/min-dalle/pull/24
# Report: the corrected form wraps the computation in the context manager.
import torch


def generate_images(model, tokens, seed):
    with torch.no_grad():
        torch.manual_seed(seed)
        image_tokens = model.decoder(tokens)
        return model.detokenizer(image_tokens)
