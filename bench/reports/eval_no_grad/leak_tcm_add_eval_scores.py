# Source: https://github.com/ductuantruong/tcm_add/issues/6
# Report: eval.py is slow and runs out of GPU memory above batch size ~12 on a 3090; the scoring loop has no torch.no_grad()
# Shape: produce_evaluation_file puts the model in eval() and scores every batch, but the forward runs with grad enabled, so each batch saves activations for a backward that never comes (scores themselves leave via .data.cpu().numpy())
# Expect: TML003 line 33
import argparse
import os

import torch
from torch.utils.data import DataLoader


def read_metadata(path):
    with open(path) as f:
        return [line.strip().split()[1] for line in f if line.strip()]


def write_scores(fname_list, score_list, save_path):
    lines = ["{} {}".format(f, s) for f, s in zip(fname_list, score_list)]
    with open(save_path, "a+") as fh:
        for i in range(0, len(lines), 500):
            fh.write("\n".join(lines[i:i + 500]) + "\n")
    print("Scores saved to {}".format(save_path))


def produce_evaluation_file(dataset, model, device, save_path):
    data_loader = DataLoader(dataset, batch_size=10, shuffle=False, drop_last=False)
    model.eval()
    fname_list = []
    score_list = []

    for batch_x, utt_id in data_loader:
        batch_x = batch_x.to(device)
        batch_out, _ = model(batch_x)  # expect: TML003
        batch_score = batch_out[:, 1].data.cpu().numpy().ravel()
        fname_list.extend(utt_id)
        score_list.extend(batch_score.tolist())

    write_scores(fname_list, score_list, save_path)


def main(build_model, build_eval_set):
    parser = argparse.ArgumentParser(description="Conformer-W2V scoring")
    parser.add_argument("--protocols_path", type=str, default="protocols/")
    parser.add_argument("--ckpt_path", type=str)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"

    model = build_model(args, device)
    model.load_state_dict(torch.load(args.ckpt_path, map_location=device))
    model = model.to(device)
    model.eval()

    for track in ["LA", "DF"]:
        file_eval = read_metadata(os.path.join(args.protocols_path, "{}.eval.txt".format(track)))
        eval_set = build_eval_set(file_eval, track)
        out = "Scores/{}/{}.txt".format(track, args.ckpt_path.replace("/", "_"))
        produce_evaluation_file(eval_set, model, device, out)
