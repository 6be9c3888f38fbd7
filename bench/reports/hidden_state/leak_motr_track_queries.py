# Source: https://github.com/megvii-research/MOTR/blob/513a78b44272e75fd654b29b16000cd718705c4f/submit_dance.py
# Report: audited correct idiom: MOTR carries track queries (track_instances) from frame to frame at test time; inference_single_image is decorated @torch.no_grad() so the carried queries hold no graph (source note: and models/motr.py at 3942c0038db8a64495d7fca2d81e193629ae9308)
# Shape: the same Detector.detect loop over a DanceTrack sequence, but inference_single_image lost its @torch.no_grad(): each frame's query_pos/output_embedding is computed from the previous frame's, so the graph chains through the whole video
# Expect: TML005 line 62
import os

import torch
from torch import nn
from torch.utils.data import DataLoader


class MOTR(nn.Module):
    def __init__(self, backbone, transformer, track_embed, post_process, num_queries=300, hidden_dim=256):
        super().__init__()
        self.backbone = backbone
        self.transformer = transformer
        self.track_embed = track_embed          # query interaction module: updates query_pos from output_embedding
        self.post_process = post_process
        self.query_embed = nn.Embedding(num_queries, hidden_dim * 2)
        self.class_embed = nn.Linear(hidden_dim, 1)

    def _generate_empty_tracks(self):
        return {"query_pos": self.query_embed.weight, "output_embedding": None}

    def _forward_single_image(self, img, track_instances):
        srcs, masks, pos = self.backbone(img)
        hs = self.transformer(srcs, masks, pos, track_instances["query_pos"])
        track_instances["output_embedding"] = hs[-1, 0]
        track_instances["pred_logits"] = self.class_embed(hs[-1, 0])
        return {"track_instances": self.track_embed(track_instances)}

    def inference_single_image(self, img, ori_img_size, track_instances=None):
        if track_instances is None:
            track_instances = self._generate_empty_tracks()
        res = self._forward_single_image(img, track_instances=track_instances)
        track_instances = self.post_process(res["track_instances"], ori_img_size)
        return {"track_instances": track_instances}


class Detector:
    def __init__(self, args, model, seq_num, dataset):
        self.args = args
        self.detr = model
        self.seq_num = seq_num
        self.dataset = dataset
        self.predict_path = os.path.join(args.output_dir, args.exp_name)

    @staticmethod
    def filter_dt_by_score(dt_instances, prob_threshold):
        keep = dt_instances["scores"] > prob_threshold
        return {k: v[keep] for k, v in dt_instances.items() if torch.is_tensor(v)}

    def detect(self, prob_threshold=0.7):
        total_dts = 0
        track_instances = None
        loader = DataLoader(self.dataset, 1, num_workers=2)
        for i, (cur_img, ori_img) in enumerate(loader):
            cur_img, ori_img = cur_img[0], ori_img[0]
            seq_h, seq_w, _ = ori_img.shape

            res = self.detr.inference_single_image(cur_img.cuda().float(), (seq_h, seq_w), track_instances)
            track_instances = res["track_instances"]  # expect: TML005

            dt_instances = {k: v.to("cpu") for k, v in track_instances.items() if torch.is_tensor(v)}
            dt_instances = self.filter_dt_by_score(dt_instances, prob_threshold)
            total_dts += len(dt_instances["scores"])
        print("totally {} dts".format(total_dts))


def main(args, build_model, make_dataset):
    detr = build_model(args)
    detr.load_state_dict(torch.load(args.resume, map_location="cpu")["model"])
    detr = detr.cuda().eval()
    for seq_num in sorted(os.listdir(os.path.join(args.mot_path, "DanceTrack/test"))):
        Detector(args, model=detr, seq_num=seq_num, dataset=make_dataset(seq_num)).detect()
