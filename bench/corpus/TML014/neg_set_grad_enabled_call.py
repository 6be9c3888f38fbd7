# Modelled on: https://github.com/kuprel/min-dalle/pull/24
# Report: "the correct way to disable gradients globally would be torch.set_grad_enabled(False)" — a plain call that works.
import torch

torch.set_grad_enabled(False)


def generate_images(model, tokens):
    return model.detokenizer(model.decoder(tokens))
