# Modelled on: https://github.com/pytorch/audio/pull/1850
# Report: "Avoid concatenation in loop": torch.cat moved outside of the loop for efficiency.
import torch as T

frames = None
for chunk in T.randn(1000, 400).split(1):
    spec = T.fft.rfft(chunk).abs()
    frames = spec if frames is None else T.vstack([frames, spec])  # expect: TML008
print(frames.shape)
