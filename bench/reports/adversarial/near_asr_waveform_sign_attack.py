# Source: https://github.com/rdcamelot/attack/blob/397218e35bb77ab0093f4211d61e6e60beb4fb2a/attack/attack_sh.py
# Report: audit of a wav2vec2 ASR attack script: the perturbation delta is a leaf tensor optimised with Adam and x_adv is recomputed from the clean waveform each iteration, so nothing is carried across iterations with a graph
# Shape: the repo's shape: x_adv = clamp(x_orig + delta) rebuilt in the loop, optimizer.zero_grad() / loss.backward() / step() on [delta], model parameters frozen, detached results returned
# Expect: near-miss: must be silent
import argparse
import os

import torch
from transformers import Wav2Vec2ForCTC, Wav2Vec2Processor

from utils_sh import load_audio, save_audio, get_alignment, compute_snr
from loss_sh import attack_loss


def untargeted_attack(model, processor, x_orig, y_f, orig_text, args):
    """Perturb the waveform until the greedy transcription changes."""
    # optimise an additive perturbation; x_adv is rebuilt from the clean audio every step
    delta = torch.zeros_like(x_orig, requires_grad=True)
    optimizer = torch.optim.Adam([delta], lr=args.lr)
    logits_adv, success = None, False
    for it in range(1, args.iterations + 1):
        x_adv = torch.clamp(x_orig + delta, -1.0, 1.0)
        logits_adv = model(x_adv.unsqueeze(0)).logits.squeeze(0)
        loss = attack_loss(logits_adv, y_f, delta, args.c, args.alpha, args.k)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        adv_ids = torch.argmax(logits_adv.detach(), dim=-1)
        adv_text = processor.batch_decode(adv_ids.unsqueeze(0))[0].upper().strip()
        print(f"iter {it}/{args.iterations} loss={loss.item():.6e} grad_norm={delta.grad.norm().item():.4f} text={adv_text!r}")
        if adv_text != orig_text:
            success = True
            break
    return torch.clamp(x_orig + delta.detach(), -1.0, 1.0), logits_adv.detach(), success


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", default=None)
    parser.add_argument("--model", default="facebook/wav2vec2-base-960h")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--c", type=float, default=1.0)
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--k", type=float, default=1.0)
    args = parser.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    processor = Wav2Vec2Processor.from_pretrained(args.model)
    model = Wav2Vec2ForCTC.from_pretrained(args.model).to(device).eval()
    model.requires_grad_(False)  # only the perturbation needs a gradient

    x_orig = load_audio(args.input).to(device)
    logits_orig, y_f = get_alignment(x_orig, processor, model, device)
    orig_text = processor.batch_decode(torch.argmax(logits_orig, dim=-1).unsqueeze(0))[0].upper().strip()

    x_adv, logits_final, success = untargeted_attack(model, processor, x_orig, y_f, orig_text, args)
    out = args.output or os.path.join(os.path.dirname(args.input), "attack_" + os.path.basename(args.input))
    save_audio(out, x_adv)
    adv_text = processor.batch_decode(torch.argmax(logits_final, dim=-1).unsqueeze(0))[0]
    print(f"saved {out}\noriginal: {orig_text}\nadversarial: {adv_text}")
    print(f"SNR(dB): {compute_snr(x_orig, x_adv - x_orig):.2f}  attack {'succeeded' if success else 'failed'}")


if __name__ == "__main__":
    main()
