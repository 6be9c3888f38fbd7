# Source: https://github.com/MarvinLvn/voice-type-classifier/issues/12
# Report: validation ran out of CUDA memory after some batches; commenters found they kept a reference to each batch's model output in a list, and moving it to host memory (or detaching it) fixed the growth.
# Shape: the same inference helper under inference mode, each chunk's scores moved to host memory before they are kept.
# Expect: near-miss: must be silent
import torch


def load_chunks(path, chunk_seconds, device):
    waveform = torch.load(path)
    step = 16000 * chunk_seconds
    return [waveform[start:start + step].to(device) for start in range(0, waveform.numel(), step)]


@torch.inference_mode()
def score_files(model, paths, device, chunk_seconds=2):
    model.eval()
    scores = []
    for path in paths:
        for chunk in load_chunks(path, chunk_seconds, device):
            frames = model(chunk.unsqueeze(0))
            scores.append(frames.sigmoid().cpu())
    return scores
