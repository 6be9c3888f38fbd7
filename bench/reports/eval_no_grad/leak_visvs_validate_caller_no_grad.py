# Source: https://github.com/PlayVoice/VI-SVS/blob/4e95a9a56aee557e4118c83cf05e14a6db50b500/vits_extend/train.py
# Report: variant of the VI-SVS singing-voice trainer where validate() (which has no no_grad of its own) is called without the caller's `with torch.no_grad():`; every validation forward then records a graph that is never backpropagated
# Shape: leak twin of the real code: the only change is that run_epochs calls validate() directly, so net.infer(...) saves activations for a backward that never comes (higher peak per val batch)
# Expect: TML003 line 26
import torch
import torch.nn.functional as F
import tqdm


def validate(hp, args, generator, discriminator, valloader, stft, writer, step, device):
    generator.eval()
    discriminator.eval()
    torch.backends.cudnn.benchmark = False

    loader = tqdm.tqdm(valloader, desc='Validation loop')
    mel_loss = 0.0
    for idx, (phone, phone_l, score, pitch, slurs, spec, spec_l, audio, audio_l) in enumerate(loader):
        phone = phone.to(device)
        phone_l = phone_l.to(device)
        score = score.to(device)
        pitch = pitch.to(device)
        slurs = slurs.to(device)
        audio = audio.to(device)

        net = generator.module if hasattr(generator, 'module') else generator
        fake_audio = net.infer(phone, phone_l, score, pitch, slurs)[:, :, :audio.size(2)]  # expect: TML003

        mel_fake = stft.mel_spectrogram(fake_audio.squeeze(1))
        mel_real = stft.mel_spectrogram(audio.squeeze(1))
        mel_loss += F.l1_loss(mel_fake, mel_real).item()

        if idx < hp.log.num_audio:
            spec_fake = stft.linear_spectrogram(fake_audio.squeeze(1))
            spec_real = stft.linear_spectrogram(audio.squeeze(1))
            writer.log_fig_audio(audio[0][0].cpu().numpy(), fake_audio[0][0].cpu().numpy(),
                                 spec_fake[0].cpu().numpy(), spec_real[0].cpu().numpy(), idx, step)

    mel_loss = mel_loss / len(valloader.dataset)
    writer.log_validation(mel_loss, generator, discriminator, step)
    torch.backends.cudnn.benchmark = True


def run_epochs(rank, hp, args, model_g, model_d, optim_g, trainloader, valloader,
               stft, writer, device, train_step, init_epoch=1, step=0):
    for epoch in range(init_epoch, hp.train.epochs):
        trainloader.batch_sampler.set_epoch(epoch)
        if rank == 0 and epoch % hp.log.eval_interval == 0:
            validate(hp, args, model_g, model_d, valloader, stft, writer, step, device)

        model_g.train()
        model_d.train()
        for batch in trainloader:
            step = train_step(model_g, model_d, optim_g, batch, step)
    return step
