# Source: https://github.com/serend1p1ty/SeqNet/pull/14
# Report: the person-search demo ran the detector/re-id model for the query and every gallery image with grad enabled; wrapping inference in torch.no_grad() cut GPU memory (merged PR)
# Shape: main() puts the model in eval(), keeps the query embedding for the whole gallery loop and feeds per-image outputs to a plotting helper; no grad-disabled context anywhere
# Expect: TML003 line 36; TML003 line 41
import argparse
from glob import glob

import torch
from PIL import Image
from torchvision.transforms import functional as F

from defaults import get_default_cfg
from models.seqnet import SeqNet
from utils.utils import resume_from_ckpt
from vis import visualize_result


def load_image(path, device):
    return [F.to_tensor(Image.open(path).convert("RGB")).to(device)]


def main(args):
    cfg = get_default_cfg()
    if args.cfg_file:
        cfg.merge_from_file(args.cfg_file)
    cfg.freeze()
    device = torch.device(cfg.DEVICE)

    model = SeqNet(cfg)
    model.to(device)
    model.eval()
    resume_from_ckpt(args.ckpt, model)

    query_img = load_image("demo_imgs/query.jpg", device)
    query_target = [{"boxes": torch.tensor([[0, 0, 466, 943]]).to(device)}]
    query_feat = model(query_img, query_target)[0]  # expect: TML003

    for gallery_img_path in sorted(glob("demo_imgs/gallery-*.jpg")):
        print(f"Processing {gallery_img_path}")
        gallery_img = load_image(gallery_img_path, device)
        gallery_output = model(gallery_img)[0]  # expect: TML003
        detections = gallery_output["boxes"]
        gallery_feats = gallery_output["embeddings"]
        similarities = gallery_feats.mm(query_feat.view(-1, 1)).squeeze()
        visualize_result(gallery_img_path, detections.cpu().numpy(), similarities.tolist())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Person search demo.")
    parser.add_argument("--cfg", dest="cfg_file")
    parser.add_argument("--ckpt", required=True)
    main(parser.parse_args())
