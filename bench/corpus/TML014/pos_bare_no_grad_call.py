# Modelled on: https://github.com/kuprel/min-dalle/pull/24
# Report: simply calling torch.no_grad() does not disable gradients; replacing it "significantly reduced the memory usage".
import torch


def generate_images(model, tokens, seed):
    torch.no_grad()  # expect: TML014
    torch.manual_seed(seed)
    image_tokens = model.decoder(tokens)
    return model.detokenizer(image_tokens)
