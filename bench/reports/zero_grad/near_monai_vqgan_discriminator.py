# Source: https://github.com/Project-MONAI/GenerativeModels/issues/102
# Report: the 2D VQGAN tutorial zeroed the generator optimizer every step but never zeroed the discriminator optimizer, so the patch discriminator's gradients (including those left by the generator's adversarial backward) piled up across steps
# Shape: the tutorial after the fix: optimizer_d.zero_grad(set_to_none=True) runs before the discriminator part of every step, next to the existing generator reset
# Expect: near-miss: must be silent
import torch
from tqdm import tqdm


def train_vqgan(model, discriminator, perceptual_loss, l1_loss, adv_loss, train_loader, val_loader,
                device, n_epochs=100, val_interval=10, adv_weight=0.01, perceptual_weight=0.001):
    optimizer_g = torch.optim.Adam(params=model.parameters(), lr=1e-4)
    optimizer_d = torch.optim.Adam(params=discriminator.parameters(), lr=5e-4)
    history = {"recons": [], "gen": [], "disc": [], "val": []}
    intermediary_images = []
    for epoch in range(n_epochs):
        model.train()
        discriminator.train()
        epoch_loss = gen_epoch_loss = disc_epoch_loss = 0.0
        progress_bar = tqdm(enumerate(train_loader), total=len(train_loader), ncols=110)
        for step, batch in progress_bar:
            images = batch["image"].to(device)
            optimizer_g.zero_grad(set_to_none=True)

            reconstruction, quantization_loss = model(images=images)
            logits_fake = discriminator(reconstruction.contiguous().float())[-1]
            recons_loss = l1_loss(reconstruction.float(), images.float())
            p_loss = perceptual_loss(reconstruction.float(), images.float())
            generator_loss = adv_loss(logits_fake, target_is_real=True, for_discriminator=False)
            loss_g = recons_loss + quantization_loss + perceptual_weight * p_loss + adv_weight * generator_loss
            loss_g.backward()
            optimizer_g.step()

            optimizer_d.zero_grad(set_to_none=True)
            logits_fake = discriminator(reconstruction.contiguous().detach())[-1]
            loss_d_fake = adv_loss(logits_fake, target_is_real=False, for_discriminator=True)
            logits_real = discriminator(images.contiguous().detach())[-1]
            loss_d_real = adv_loss(logits_real, target_is_real=True, for_discriminator=True)
            discriminator_loss = (loss_d_fake + loss_d_real) * 0.5
            loss_d = adv_weight * discriminator_loss
            loss_d.backward()
            optimizer_d.step()

            epoch_loss += recons_loss.item()
            gen_epoch_loss += generator_loss.item()
            disc_epoch_loss += discriminator_loss.item()
            progress_bar.set_postfix({"recons_loss": epoch_loss / (step + 1),
                                      "gen_loss": gen_epoch_loss / (step + 1),
                                      "disc_loss": disc_epoch_loss / (step + 1)})
        history["recons"].append(epoch_loss / (step + 1))
        history["gen"].append(gen_epoch_loss / (step + 1))
        history["disc"].append(disc_epoch_loss / (step + 1))

        if (epoch + 1) % val_interval == 0:
            model.eval()
            val_loss = 0.0
            with torch.no_grad():
                for val_step, batch in enumerate(val_loader, start=1):
                    images = batch["image"].to(device)
                    reconstruction, quantization_loss = model(images=images)
                    if val_step == 1:
                        intermediary_images.append(reconstruction[:4, 0].cpu())
                    val_loss += l1_loss(reconstruction.float(), images.float()).item()
            history["val"].append(val_loss / val_step)
    return history, intermediary_images
