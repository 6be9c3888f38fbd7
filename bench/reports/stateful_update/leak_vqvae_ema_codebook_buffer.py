# Source: https://github.com/zalandoresearch/pytorch-vq-vae/blob/master/vq-vae.ipynb
# Report: VectorQuantizerEMA updates its codebook with exponential moving averages inside forward(); the notebook re-wraps the EMA of the assigned encoder outputs in nn.Parameter(...) each step, this variant keeps it as a plain registered buffer
# Shape: dw = encodings.T @ flat_input is graph-attached through the encoder; self._ema_w = decay * self._ema_w + (1 - decay) * dw reads its own previous value, so every training step's encoder graph is chained onto the buffer
# Expect: TML005 line 43
import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuantizerEMA(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, commitment_cost, decay, epsilon=1e-5):
        super().__init__()
        self._embedding_dim = embedding_dim
        self._num_embeddings = num_embeddings
        self._embedding = nn.Embedding(num_embeddings, embedding_dim)
        self._embedding.weight.data.normal_()
        self._commitment_cost = commitment_cost
        self.register_buffer("_ema_cluster_size", torch.zeros(num_embeddings))
        self.register_buffer("_ema_w", torch.randn(num_embeddings, embedding_dim))
        self._decay = decay
        self._epsilon = epsilon

    def forward(self, inputs):
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape
        flat_input = inputs.view(-1, self._embedding_dim)

        distances = (torch.sum(flat_input ** 2, dim=1, keepdim=True)
                     + torch.sum(self._embedding.weight ** 2, dim=1)
                     - 2 * torch.matmul(flat_input, self._embedding.weight.t()))
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings, device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)

        if self.training:
            self._ema_cluster_size = self._ema_cluster_size * self._decay + \
                (1 - self._decay) * torch.sum(encodings, 0)
            n = torch.sum(self._ema_cluster_size.data)
            self._ema_cluster_size = (
                (self._ema_cluster_size + self._epsilon)
                / (n + self._num_embeddings * self._epsilon) * n)
            dw = torch.matmul(encodings.t(), flat_input)
            self._ema_w = self._ema_w * self._decay + (1 - self._decay) * dw  # expect: TML005
            self._embedding.weight.data.copy_(self._ema_w / self._ema_cluster_size.unsqueeze(1))

        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        loss = self._commitment_cost * e_latent_loss
        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings


class Model(nn.Module):
    def __init__(self, encoder, pre_vq_conv, vq_vae, decoder):
        super().__init__()
        self._encoder = encoder
        self._pre_vq_conv = pre_vq_conv
        self._vq_vae = vq_vae
        self._decoder = decoder

    def forward(self, x):
        z = self._pre_vq_conv(self._encoder(x))
        loss, quantized, perplexity, _ = self._vq_vae(z)
        x_recon = self._decoder(quantized)
        return loss, x_recon, perplexity


def train(model, optimizer, training_loader, data_variance, num_training_updates, device):
    model.train()
    train_res_recon_error = []
    train_res_perplexity = []
    for i in range(num_training_updates):
        (data, _) = next(iter(training_loader))
        data = data.to(device)
        optimizer.zero_grad()
        vq_loss, data_recon, perplexity = model(data)
        recon_error = F.mse_loss(data_recon, data) / data_variance
        loss = recon_error + vq_loss
        loss.backward()
        optimizer.step()
        train_res_recon_error.append(recon_error.item())
        train_res_perplexity.append(perplexity.item())
        if (i + 1) % 100 == 0:
            print("%d iterations" % (i + 1))
            print("recon_error: %.3f" % (sum(train_res_recon_error[-100:]) / 100))
            print("perplexity: %.3f" % (sum(train_res_perplexity[-100:]) / 100))
