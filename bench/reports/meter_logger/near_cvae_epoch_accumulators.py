# Source: https://github.com/girafe-ai/ml-course/pull/19
# Report: the merged fix for the conditional-VAE homework converts each loss term with .item() before adding it to the epoch accumulators
# Shape: same three epoch-level accumulators, now fed Python floats from .item(), so no graph outlives the step
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
import tqdm


def kl_divergence(mu_values, log_sigma_values):
    return -0.5 * torch.sum(1 + 2 * log_sigma_values - mu_values.pow(2) - torch.exp(2 * log_sigma_values))


@torch.no_grad()
def on_epoch_end(model, test_batch, device):
    model.eval()
    recon, latent, mu_values, log_sigma_values = model(test_batch.to(device))
    return recon.cpu(), mu_values.cpu(), log_sigma_values.cpu()


def train(model, opt, train_loader, test_batch, device, num_epochs):
    epochs, latent_distrs = [], []
    n_samples = len(train_loader.dataset)
    for epoch_num in tqdm.trange(num_epochs):
        model.train()
        loss_accumulator = 0.0
        bce_acc = 0.0
        kl_acc = 0.0
        for batch_x, batch_label in train_loader:
            batch_x = batch_x.to(device)
            predictions, latent, mu_values, log_sigma_values = model(batch_x)

            kl_loss = kl_divergence(mu_values, log_sigma_values)
            bce_loss = 28 * 28 * F.binary_cross_entropy(predictions, batch_x)
            loss = (bce_loss + kl_loss) / 2.0 / 28.0 / 28.0
            loss.backward()
            opt.step()
            opt.zero_grad()

            loss_accumulator += loss.item() / n_samples
            bce_acc += bce_loss.item() / n_samples
            kl_acc += kl_loss.item() / n_samples

        if epoch_num % 5 == 0:
            print(
                "Epoch num: {}\nTraining loss={:.4f}, KL divergence={:.4f}, BCE Loss={:.4f}".format(
                    epoch_num, loss_accumulator, kl_acc, bce_acc
                )
            )
            _, mu_test, log_sigma_test = on_epoch_end(model, test_batch, device)
            epochs.append(epoch_num)
            latent_distrs.append((mu_test, log_sigma_test))
    return epochs, latent_distrs
