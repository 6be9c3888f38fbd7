# Source: https://github.com/ruizhecao96/CMGAN/blob/37b7c7ce7e439686105d7cbe425bc0af1af0e5c5/src/train.py
# Report: conformer-GAN speech enhancement trainer: train_step updates the generator, then the PESQ-metric discriminator; test_step is decorated with @torch.no_grad() and both return .item() values
# Shape: the generator loss also fills the discriminator's .grad (predict_fake_metric), so optimizer_disc.zero_grad() inside the PESQ branch clears it before the discriminator backward/step; test() sums floats
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, discriminator, batch_pesq, train_ds, test_ds, args, device):
        self.model = model
        self.discriminator = discriminator
        self.batch_pesq = batch_pesq
        self.train_ds, self.test_ds = train_ds, test_ds
        self.args = args
        self.device = device
        self.n_fft, self.hop = 400, 100
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=args.init_lr)
        self.optimizer_disc = torch.optim.AdamW(self.discriminator.parameters(), lr=2 * args.init_lr)

    def _spectra(self, noisy, clean):
        window = torch.hamming_window(self.n_fft).to(self.device)
        noisy_spec = torch.stft(noisy, self.n_fft, self.hop, window=window, onesided=True, return_complex=False)
        clean_spec = torch.stft(clean, self.n_fft, self.hop, window=window, onesided=True, return_complex=False)
        return noisy_spec.permute(0, 3, 2, 1), clean_spec.permute(0, 3, 1, 2)

    def _generator_losses(self, batch):
        clean, noisy = batch[0].to(self.device), batch[1].to(self.device)
        one_labels = torch.ones(clean.size(0), device=self.device)
        noisy_spec, clean_spec = self._spectra(noisy, clean)
        clean_real, clean_imag = clean_spec[:, 0:1], clean_spec[:, 1:2]
        est_real, est_imag = self.model(noisy_spec)
        est_real, est_imag = est_real.permute(0, 1, 3, 2), est_imag.permute(0, 1, 3, 2)
        est_mag = torch.sqrt(est_real ** 2 + est_imag ** 2)
        clean_mag = torch.sqrt(clean_real ** 2 + clean_imag ** 2)
        predict_fake_metric = self.discriminator(clean_mag, est_mag)
        gen_loss_gan = F.mse_loss(predict_fake_metric.flatten(), one_labels)
        loss_mag = F.mse_loss(est_mag, clean_mag)
        loss_ri = F.mse_loss(est_real, clean_real) + F.mse_loss(est_imag, clean_imag)
        w = self.args.loss_weights
        loss = w[0] * loss_ri + w[1] * loss_mag + w[3] * gen_loss_gan
        return loss, clean, est_real, clean_mag, est_mag, one_labels

    def train_step(self, batch):
        self.optimizer.zero_grad()
        loss, clean, est_audio, clean_mag, est_mag, one_labels = self._generator_losses(batch)
        loss.backward()
        self.optimizer.step()

        pesq_score = self.batch_pesq(list(clean.cpu().numpy()), list(est_audio.detach().cpu().numpy()))
        if pesq_score is not None:
            self.optimizer_disc.zero_grad()
            predict_enhance_metric = self.discriminator(clean_mag, est_mag.detach())
            predict_max_metric = self.discriminator(clean_mag, clean_mag)
            discrim_loss_metric = F.mse_loss(predict_max_metric.flatten(), one_labels) + \
                F.mse_loss(predict_enhance_metric.flatten(), pesq_score)
            discrim_loss_metric.backward()
            self.optimizer_disc.step()
        else:
            discrim_loss_metric = torch.tensor([0.])
        return loss.item(), discrim_loss_metric.item()

    @torch.no_grad()
    def test_step(self, batch):
        loss, *_ = self._generator_losses(batch)
        return loss.item()

    def test(self):
        self.model.eval()
        self.discriminator.eval()
        gen_loss_total = 0.
        for idx, batch in enumerate(self.test_ds):
            gen_loss_total += self.test_step(batch)
        return gen_loss_total / (idx + 1)

    def train(self):
        for epoch in range(self.args.epochs):
            self.model.train()
            self.discriminator.train()
            for step, batch in enumerate(self.train_ds, 1):
                loss, disc_loss = self.train_step(batch)
                if step % self.args.log_interval == 0:
                    print(f"Epoch {epoch}, Step {step}, loss: {loss}, disc_loss: {disc_loss}")
            gen_loss = self.test()
            torch.save(self.model.state_dict(), f"CMGAN_epoch_{epoch}_{str(gen_loss)[:5]}")
