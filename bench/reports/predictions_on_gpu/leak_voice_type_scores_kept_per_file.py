# Source: https://github.com/MarvinLvn/voice-type-classifier/issues/12
# Report: validation ran out of CUDA memory after some batches; commenters found they kept a reference to each batch's model output in a list, and moving it to host memory (or detaching it) fixed the growth.
# Shape: an inference helper scores each audio chunk without no_grad and keeps every chunk's score tensor in a list that lives for the whole file set.
# Expect: TML001 line 20; TML003 line 19
import torch


def load_chunks(path, chunk_seconds, device):
    waveform = torch.load(path)
    step = 16000 * chunk_seconds
    return [waveform[start:start + step].to(device) for start in range(0, waveform.numel(), step)]


def score_files(model, paths, device, chunk_seconds=2):
    model.eval()
    scores = []
    for path in paths:
        for chunk in load_chunks(path, chunk_seconds, device):
            frames = model(chunk.unsqueeze(0))  # expect: TML003
            scores.append(frames.sigmoid())  # expect: TML001
    return scores
