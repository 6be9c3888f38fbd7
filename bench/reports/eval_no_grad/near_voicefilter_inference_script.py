# Source: https://github.com/maum-ai/voicefilter/pull/6
# Report: the VoiceFilter inference script ran the d-vector embedder and the mask network without torch.no_grad(); adding the scope roughly halved GPU memory at inference
# Shape: the merged fix: the whole body of main() (model loading, embedder and mask forward) runs inside with torch.no_grad()
# Expect: near-miss: must be silent
import argparse
import os

import librosa
import soundfile as sf
import torch

from model.embedder import SpeechEmbedder
from model.model import VoiceFilter
from utils.audio import Audio
from utils.hparams import HParam


def main(args, hp):
    with torch.no_grad():
        model = VoiceFilter(hp).cuda()
        chkpt_model = torch.load(args.checkpoint_path, map_location="cuda")["model"]
        model.load_state_dict(chkpt_model)
        model.eval()

        embedder = SpeechEmbedder(hp).cuda()
        chkpt_embed = torch.load(args.embedder_path, map_location="cuda")
        embedder.load_state_dict(chkpt_embed)
        embedder.eval()

        audio = Audio(hp)
        dvec_wav, _ = librosa.load(args.reference_file, sr=16000)
        dvec_mel = audio.get_mel(dvec_wav)
        dvec_mel = torch.from_numpy(dvec_mel).float().cuda()
        dvec = embedder(dvec_mel)
        dvec = dvec.unsqueeze(0)

        mixed_wav, _ = librosa.load(args.mixed_file, sr=16000)
        mag, phase = audio.wav2spec(mixed_wav)
        mag = torch.from_numpy(mag).float().cuda().unsqueeze(0)
        mask = model(mag, dvec)
        est_mag = mag * mask

        est_mag = est_mag[0].cpu().detach().numpy()
        est_wav = audio.spec2wav(est_mag, phase)

        os.makedirs(args.out_dir, exist_ok=True)
        out_path = os.path.join(args.out_dir, "result.wav")
        sf.write(out_path, est_wav, 16000)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", type=str, required=True)
    parser.add_argument("-e", "--embedder_path", type=str, required=True)
    parser.add_argument("--checkpoint_path", type=str, default=None)
    parser.add_argument("-m", "--mixed_file", type=str, required=True)
    parser.add_argument("-r", "--reference_file", type=str, required=True)
    parser.add_argument("-o", "--out_dir", type=str, required=True)
    args = parser.parse_args()
    main(args, HParam(args.config))
