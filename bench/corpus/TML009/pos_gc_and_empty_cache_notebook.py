# Modelled on: https://taourl.com/read-2583566.html
# Report: GPU memory "keeps increasing" even with torch.cuda.empty_cache() called in every iteration of the loop.
import gc

import torch as T

model = T.nn.Linear(10, 10).cuda()
optimizer = T.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100):
    inputs = T.randn(32, 10).cuda()
    targets = T.randn(32, 10).cuda()
    optimizer.zero_grad()
    loss = T.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    gc.collect()
    T.cuda.empty_cache()  # expect: TML009
