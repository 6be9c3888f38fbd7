# Source: https://github.com/Audio-WestlakeU/FullSubNet/blob/main/recipes/dns_interspeech_2020/fullsubnet/trainer.py
# Report: one edit away from the repository: the enhanced waveform is only squeezed, not moved to the host, before it is collected for the metrics (noisy/clean still go through .cpu().numpy())
# Shape: under @torch.no_grad() the istft output is a device tensor (not graph-attached); appending it to enhanced_y_list[speech_type] (a dict of lists bound before the loop) keeps every utterance of the validation set on the GPU until the epoch ends
# Expect: TML004 line 66
import torch


class Trainer:
    def __init__(self, model, loss_function, valid_dataloader, writer, rank, n_fft=512, hop=256):
        self.model = model
        self.loss_function = loss_function
        self.valid_dataloader = valid_dataloader
        self.writer = writer
        self.rank = rank
        self.n_fft = n_fft
        self.hop = hop

    def torch_stft(self, y):
        spec = torch.stft(y, self.n_fft, self.hop, window=torch.hann_window(self.n_fft, device=y.device), return_complex=True)
        return spec.abs(), spec.angle(), spec.real, spec.imag

    def torch_istft(self, real, imag, length):
        spec = torch.complex(real, imag)
        return torch.istft(spec, self.n_fft, self.hop, window=torch.hann_window(self.n_fft, device=real.device), length=length)

    def validate(self, epoch):
        self.model.eval()
        score = self._validation_epoch(epoch)
        self.model.train()
        return score

    @torch.no_grad()
    def _validation_epoch(self, epoch):
        loss_total = 0.0
        loss_list = {"With_reverb": 0.0, "No_reverb": 0.0}
        noisy_y_list = {"With_reverb": [], "No_reverb": []}
        clean_y_list = {"With_reverb": [], "No_reverb": []}
        enhanced_y_list = {"With_reverb": [], "No_reverb": []}

        for i, (noisy, clean, name, speech_type) in enumerate(self.valid_dataloader):
            speech_type = speech_type[0]
            noisy = noisy.to(self.rank)
            clean = clean.to(self.rank)

            noisy_mag, _, noisy_real, noisy_imag = self.torch_stft(noisy)
            _, _, clean_real, clean_imag = self.torch_stft(clean)
            cIRM = torch.stack([clean_real - noisy_real, clean_imag - noisy_imag], dim=-1)

            cRM = self.model(noisy_mag.unsqueeze(1))
            cRM = cRM.permute(0, 2, 3, 1)
            loss = self.loss_function(cIRM, cRM)

            enhanced_real = cRM[..., 0] * noisy_real - cRM[..., 1] * noisy_imag
            enhanced_imag = cRM[..., 1] * noisy_real + cRM[..., 0] * noisy_imag
            enhanced = self.torch_istft(enhanced_real, enhanced_imag, length=noisy.size(-1))

            noisy = noisy.detach().squeeze(0).cpu().numpy()
            clean = clean.detach().squeeze(0).cpu().numpy()
            enhanced = enhanced.squeeze(0)

            loss_total += loss
            loss_list[speech_type] += loss

            noisy_y_list[speech_type].append(noisy)
            clean_y_list[speech_type].append(clean)
            enhanced_y_list[speech_type].append(enhanced)  # expect: TML004

        self.writer.add_scalar("Loss/Validation_Total", loss_total / len(self.valid_dataloader), epoch)
        scores = {}
        for speech_type in ("With_reverb", "No_reverb"):
            scores[speech_type] = self.metrics_visualization(
                noisy_y_list[speech_type], clean_y_list[speech_type], enhanced_y_list[speech_type], epoch)
        return scores["No_reverb"]

    def metrics_visualization(self, noisy_list, clean_list, enhanced_list, epoch):
        # PESQ/STOI are computed on CPU worker processes from numpy arrays
        return sum(float(abs(e.cpu().numpy() - c).mean()) for e, c in zip(enhanced_list, clean_list)) / max(1, len(clean_list))
