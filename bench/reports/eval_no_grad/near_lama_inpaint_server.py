# Source: https://github.com/Sanster/IOPaint/pull/7
# Report: the inpainting server ran the LaMa model for every request without eval mode and with gradients stored; adding model.eval() and torch.no_grad() saved about 2 GB of GPU memory.
# Shape: same Flask route and `inference` helper; the model is put in eval mode at load time and the forward runs under `with torch.no_grad():` (the merged fix).
# Expect: near-miss: must be silent
import io

import numpy as np
import torch
from flask import Flask, request, send_file
from PIL import Image

app = Flask(__name__)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.jit.load("big-lama.pt", map_location="cpu").to(device)
model.eval()


def pad_to_modulo(img: np.ndarray, mod: int = 8) -> np.ndarray:
    h, w = img.shape[:2]
    out_h = (h + mod - 1) // mod * mod
    out_w = (w + mod - 1) // mod * mod
    pad = ((0, out_h - h), (0, out_w - w)) + ((0, 0),) * (img.ndim - 2)
    return np.pad(img, pad, mode="symmetric")


def inference(image: np.ndarray, mask: np.ndarray) -> np.ndarray:
    h, w = image.shape[:2]
    image = pad_to_modulo(image)
    mask = pad_to_modulo(mask)
    image_t = torch.from_numpy(image).permute(2, 0, 1).unsqueeze(0).float().div(255).to(device)
    mask_t = torch.from_numpy((mask > 127).astype(np.float32))[None, None].to(device)
    with torch.no_grad():
        inpainted = model(image_t, mask_t)
    result = inpainted[0].permute(1, 2, 0).clamp(0, 1).cpu().numpy()
    return (result[:h, :w] * 255).astype(np.uint8)


@app.route("/inpaint", methods=["POST"])
def process():
    image = np.array(Image.open(request.files["image"]).convert("RGB"))
    mask = np.array(Image.open(request.files["mask"]).convert("L"))
    res = inference(image, mask)
    buf = io.BytesIO()
    Image.fromarray(res).save(buf, format="PNG")
    buf.seek(0)
    return send_file(buf, mimetype="image/png")
