# Source: https://github.com/bytedance/SPTSv2/issues/2
# Report: predict.py runs out of memory on a 10 GB card for a single image while main.py --eval is fine; adding @torch.no_grad() above main() fixes it
# Shape: main() builds the model, calls model.eval() and runs the text-spotting transformer forward with grad enabled, so all decoder activations are saved for a backward that never comes
# Expect: TML003 line 60
import argparse

import cv2
import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torchvision import transforms as T


class SpotterStub(nn.Module):
    """Backbone + transformer decoder over a fixed set of token queries (points and characters)."""

    def __init__(self, vocab=1100, dim=256, max_steps=27 * 60):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, dim, 16, stride=16), nn.ReLU())
        self.embed = nn.Embedding(vocab, dim)
        self.queries = nn.Parameter(torch.randn(1, max_steps, dim))
        layer = nn.TransformerDecoderLayer(dim, 8, 1024, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, 6)
        self.head = nn.Linear(dim, vocab)

    def forward(self, image, start_seq):
        memory = self.backbone(image).flatten(2).transpose(1, 2)
        queries = self.queries + self.embed(start_seq)
        hidden = self.decoder(queries, memory)
        probs, tokens = self.head(hidden).softmax(-1).max(-1)
        return tokens, probs


def get_args():
    parser = argparse.ArgumentParser("spotter predict")
    parser.add_argument("--resume", default="")
    parser.add_argument("--img_path", default="")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--start_index", type=int, default=1098)
    parser.add_argument("--chars", default=" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return parser.parse_args()


def main(args):
    device = torch.device(args.device)
    model = SpotterStub()
    model.to(device)
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])

    image = Image.open(args.img_path).convert("RGB")
    w_ori, h_ori = image.size
    transform = T.Compose([T.Resize(1000), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    image_new = transform(image).unsqueeze(0).to(device)
    seq = torch.ones(1, 1, dtype=torch.long, device=device) * args.start_index
    model.eval()

    tokens, values = model(image_new, seq)  # expect: TML003
    canvas = cv2.cvtColor(np.array(image), cv2.COLOR_RGB2BGR)
    for i in range(tokens.shape[1] // 27):
        if values[0, 27 * i:27 * (i + 1)].mean().item() > 0.922:
            x = tokens[0, 27 * i].item() * (float(w_ori) / 1000)
            y = tokens[0, 27 * i + 1].item() * (float(h_ori) / 1000)
            text = "".join(args.chars[c - 1000] for c in tokens[0, 27 * i + 2:27 * (i + 1)].tolist()
                           if 1000 < c < 1000 + len(args.chars) + 1)
            cv2.putText(canvas, text, (int(x), int(y)), cv2.FONT_HERSHEY_COMPLEX, 0.75, (0, 255, 0), 2)
    cv2.imwrite("pred_" + args.img_path.split("/")[-1], canvas)


if __name__ == "__main__":
    main(get_args())
