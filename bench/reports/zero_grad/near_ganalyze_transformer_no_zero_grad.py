# Source: https://github.com/LoreGoetschalckx/GANalyze/issues/7
# Report: the PyTorch GANalyze training script called loss.backward() and optimizer.step() for the latent-direction transformer on every batch but never called zero_grad, so each update used the sum of all past batches' gradients
# Shape: same module-level script with optimizer.zero_grad() at the top of the batch loop, before the generator and transformation forwards
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.optim as optim

import assessors
import generators
import transformations.pytorch as transformations
import utils.common
import utils.pytorch

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
dim_z, vocab_size, batch_size, num_samples = 140, 1000, 4, 400000
alpha_a, alpha_b = -0.5, 0.5

generator = generators.biggan256().to(device).eval()
for p in generator.parameters():
    p.requires_grad = False
assessor = assessors.emonet(True).to(device).eval()
for p in assessor.parameters():
    p.requires_grad = False
transformation = transformations.OneDirection(dim_z, vocab_size).to(device)

optimizer = optim.Adam(transformation.parameters(), lr=0.0002)
losses = utils.common.AverageMeter(name="Loss")

zs = utils.common.truncated_z_sample(num_samples, dim_z, 1)
ys = np.random.randint(0, vocab_size, size=zs.shape[0])

for batch_start in range(0, num_samples, batch_size):
    optimizer.zero_grad()
    s = slice(batch_start, min(num_samples, batch_start + batch_size))
    z = torch.from_numpy(zs[s]).float().to(device)
    y = utils.pytorch.one_hot(torch.from_numpy(ys[s]).to(device))
    step_sizes = (alpha_b - alpha_a) * np.random.random(size=batch_size) + alpha_a
    step_b = torch.from_numpy(np.repeat(step_sizes, dim_z).reshape(batch_size, dim_z)).float().to(device)

    images = utils.pytorch.denorm(generator(z, y))
    target_scores = assessor(images).float() + torch.from_numpy(step_sizes).float().to(device)

    z_transformed = transformation.transform(z, y, step_b)
    images_transformed = utils.pytorch.denorm(generator(z_transformed, y))
    scores_transformed = assessor(images_transformed).float()

    loss = transformation.compute_loss(scores_transformed, target_scores)
    loss.backward()
    optimizer.step()

    losses.update(loss.item(), batch_size)
    if (batch_start // batch_size) % 250 == 0:
        print(f"[{batch_start}/{num_samples}] {losses}")
        torch.save(transformation.state_dict(), f"checkpoints/pytorch_model_{batch_start}.pth")
