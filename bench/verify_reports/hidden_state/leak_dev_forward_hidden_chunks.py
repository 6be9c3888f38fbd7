# Source: https://github.com/mravanelli/pytorch-kaldi/pull/41
# Report: GPU memory kept growing during the forward pass on the dev set, forcing much smaller dev batches; hidden-state graphs accumulated across minibatches until the forward was wrapped in torch.no_grad().
# Shape: the dev loop carries the recurrent state from chunk to chunk of an utterance stream, with autograd on and no backward.
# Expect: TML003 line 17; TML005 line 17
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.GRU(13, 48, batch_first=True).to(device)
classifier = nn.Linear(48, 30).to(device)
model.eval()
state = None
errors = 0
for chunk in range(24):
    features = torch.randn(4, 10, 13, device=device)
    out, state = model(features, state)  # expect: TML003, TML005
    errors += int((classifier(out).argmax(-1) != 0).sum())
print(errors)
