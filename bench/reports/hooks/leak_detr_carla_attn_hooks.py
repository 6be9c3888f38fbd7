# Source: https://github.com/Harold-y/CARLA_WORK/blob/7bc9366dcbac5c27b7224ab8b798ca7fa3c5d448/carla_scripts/worksc_car.py
# Report: audit: draw_image() attaches three DETR forward hooks (backbone features, last encoder self-attention, last decoder cross-attention) for every simulator frame; the repository removes every handle after the forward, this variant drops the handles, so hooks pile up frame after frame
# Shape: per-frame camera loop; each frame makes fresh lists and registers lambdas that append to them, the handles are thrown away, so every older hook keeps appending GPU features to its own old list on every later forward
# Expect: TML007 line 44; TML007 line 45; TML007 line 46
import argparse

import cv2
import numpy as np
import torch
import torchvision.transforms as T

from detr.models import build_model

CONF_THRESH = 0.4
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
to_tensor = T.Compose([T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])


def box_cxcywh_to_xyxy(b):
    cx, cy, w, h = b.unbind(1)
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=1)


def load_detr(ckpt_path, args):
    detr, _, _ = build_model(args)
    state = torch.load(ckpt_path, map_location="cpu")
    detr.load_state_dict(state["model"])
    return detr.to(device).eval()


def draw_boxes(frame, boxes, heat):
    for x0, y0, x1, y1 in boxes.numpy().astype(np.int32):
        cv2.rectangle(frame, (x0, y0), (x1, y1), (0, 255, 0), 2)
    heat = cv2.resize(heat, (frame.shape[1], frame.shape[0]))
    overlay = cv2.applyColorMap((255 * heat).astype(np.uint8), cv2.COLORMAP_JET)
    return cv2.addWeighted(frame, 0.7, overlay, 0.3, 0)


def run_camera(detr, frames):
    for frame in frames:
        img_h, img_w = frame.shape[:2]
        image = to_tensor(frame).unsqueeze(0).to(device)
        conv_features, enc_attn, dec_attn = [], [], []
        detr.backbone[-2].register_forward_hook(lambda m, inp, out: conv_features.append(out))  # expect: TML007
        detr.transformer.encoder.layers[-1].self_attn.register_forward_hook(lambda m, inp, out: enc_attn.append(out[1]))  # expect: TML007
        detr.transformer.decoder.layers[-1].multihead_attn.register_forward_hook(lambda m, inp, out: dec_attn.append(out[1]))  # expect: TML007
        with torch.no_grad():
            outputs = detr(image)
        probas = outputs["pred_logits"].softmax(-1)[0, :, :-1].cpu()
        keep = probas.max(-1).values > CONF_THRESH
        boxes = box_cxcywh_to_xyxy(outputs["pred_boxes"][0].cpu()[keep])
        boxes = boxes * torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32)
        if keep.sum() == 0:
            cv2.imshow("detr", frame)
            continue
        fh, fw = conv_features[0]["0"].tensors.shape[-2:]
        heat = dec_attn[0][0, keep.to(device)].mean(0).reshape(fh, fw).cpu().numpy()
        heat = heat / max(heat.max(), 1e-6)
        cv2.imshow("detr", draw_boxes(frame.copy(), boxes, heat))
        if cv2.waitKey(1) == 27:
            break


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", default="detr/output/checkpoint.pth")
    parser.add_argument("--video", default="carla_run.mp4")
    args = parser.parse_args()
    model = load_detr(args.ckpt, args)
    cap = cv2.VideoCapture(args.video)
    run_camera(model, iter(lambda: cap.read()[1], None))
