# Source: https://github.com/dhimasryan/MOSA-Net-Cross-Domain/issues/2
# Report: HuBERT feature extraction for VoiceMOS fails with CUDA OOM on an RTX 2080 Ti; it works once the forward pass is wrapped in torch.no_grad()
# Shape: Save_NPY puts the model in eval mode and hands it to per-split generators, whose per-file helper runs the large HuBERT forward with grad enabled (the result is only detached afterwards)
# Expect: TML003 line 29
import os

import librosa
import numpy as np
import torch


def list_read(filelist):
    with open(filelist, "r") as f:
        return [line.rstrip("\n") for line in f]


def load_hubert(cp_path):
    import fairseq
    models, _, _ = fairseq.checkpoint_utils.load_model_ensemble_and_task([cp_path])
    return models[0]


def extract_ssl_feat(fields, model, list_new, dirname, wav_root):
    name = fields[0]
    cached_path = os.path.join(dirname, name[:-4] + ".npy")
    audio, _ = librosa.load(os.path.join(wav_root, name), sr=16000)

    wav = torch.from_numpy(np.reshape(audio, (1, audio.shape[0]))).to("cuda:0")
    feats = model(wav, features_only=True, mask=False)["x"]  # expect: TML003
    np.save(cached_path, feats.detach().to("cpu").numpy())

    list_new.append(fields[1] + "," + cached_path)
    return list_new


def split_generator(file_list, model, dirname, out_list, wav_root):
    os.makedirs(dirname, exist_ok=True)
    list_new = []
    for line in file_list:
        list_new = extract_ssl_feat(line.split(","), model, list_new, dirname, wav_root)
    with open(out_list, "w") as g:
        for item in list_new:
            g.write("%s\n" % item)


def save_npy(train_list, val_list, wav_root="./data/wav/"):
    model = load_hubert("./fairseq/hubert_large_ll60k.pt")
    model.eval()
    model = model.to(torch.device("cuda:0"))
    split_generator(train_list, model, "./data/hubert/train/", "./data/train_npy.txt", wav_root)
    split_generator(val_list, model, "./data/hubert/val/", "./data/val_npy.txt", wav_root)


if __name__ == "__main__":
    save_npy(list_read("./data/sets/train_mos_list.txt"),
             list_read("./data/sets/val_mos_list.txt"))
