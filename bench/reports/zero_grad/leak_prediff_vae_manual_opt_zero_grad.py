# Source: https://github.com/gaozhihan/PreDiff/pull/33
# Report: "Fix: gradient accumulation in VAE training": the Lightning VAE-GAN module (manual optimization) zeroed grads before every manual_backward, breaking accumulation; the fix moves zero_grad after the accumulated step. This variant moves it for the generator optimizer only and drops it for the discriminator
# Shape: with automatic_optimization = False Lightning never resets gradients; training_step is called once per batch, d_opt.step() runs every accumulate_grad_batches batches and nothing ever resets the discriminator's .grad, so every step applies the sum of all gradients since the start
# Expect: TML002 line 78
import pytorch_lightning as pl
import torch
from einops import rearrange


class VAESEVIRPLModule(pl.LightningModule):
    def __init__(self, vae, loss, oc, accumulate_grad_batches: int = 1):
        super().__init__()
        self.automatic_optimization = False
        self.accumulate_grad_batches = accumulate_grad_batches
        self.torch_nn_module = vae
        self.loss = loss
        self.oc = oc

    def configure_optimizers(self):
        lr = self.oc.optim.lr
        g_opt = torch.optim.Adam(
            list(self.torch_nn_module.encoder.parameters())
            + list(self.torch_nn_module.decoder.parameters())
            + list(self.torch_nn_module.quant_conv.parameters())
            + list(self.torch_nn_module.post_quant_conv.parameters()),
            lr=lr, betas=(0.5, 0.9))
        d_opt = torch.optim.Adam(self.loss.discriminator.parameters(), lr=lr, betas=(0.5, 0.9))
        g_sch = torch.optim.lr_scheduler.LambdaLR(g_opt, lambda step: 1.0)
        d_sch = torch.optim.lr_scheduler.LambdaLR(d_opt, lambda step: 1.0)
        return [g_opt, d_opt], [g_sch, d_sch]

    def get_last_layer(self):
        return self.torch_nn_module.decoder.conv_out.weight

    def get_input(self, batch):
        return rearrange(batch, "b 1 h w c -> b c h w").contiguous(), None

    def forward(self, target_bchw, sample_posterior=True):
        pred_bchw, posterior = self.torch_nn_module(
            sample=target_bchw, sample_posterior=sample_posterior, return_posterior=True)
        return pred_bchw, posterior

    def training_step(self, batch, batch_idx):
        g_opt, d_opt = self.optimizers()
        g_sch, d_sch = self.lr_schedulers()

        target_bchw, _ = self.get_input(batch=batch)
        pred_bchw, posterior = self(target_bchw)

        # train encoder+decoder+logvar
        aeloss, log_dict_ae = self.loss(target_bchw, pred_bchw, posterior, optimizer_idx=0,
                                        global_step=self.global_step, mask=None,
                                        last_layer=self.get_last_layer(), split="train")
        aeloss /= self.accumulate_grad_batches
        self.log("aeloss", aeloss, prog_bar=True, logger=True, on_step=True, on_epoch=True)
        self.log_dict(log_dict_ae, prog_bar=False, logger=True, on_step=True, on_epoch=False)

        self.manual_backward(aeloss)
        if (batch_idx + 1) % self.accumulate_grad_batches == 0:
            self.clip_gradients(g_opt, gradient_clip_val=self.oc.optim.gradient_clip_val,
                                gradient_clip_algorithm="norm")
            g_opt.step()
            g_sch.step()
            g_opt.zero_grad()

        # train the discriminator
        discloss, log_dict_disc = self.loss(target_bchw, pred_bchw, posterior, optimizer_idx=1,
                                            global_step=self.global_step, mask=None,
                                            last_layer=self.get_last_layer(), split="train")
        discloss /= self.accumulate_grad_batches
        self.log("discloss", discloss, prog_bar=True, logger=True, on_step=True, on_epoch=True)
        self.log_dict(log_dict_disc, prog_bar=False, logger=True, on_step=True, on_epoch=False)

        self.manual_backward(discloss)
        if (batch_idx + 1) % self.accumulate_grad_batches == 0:
            self.clip_gradients(d_opt, gradient_clip_val=self.oc.optim.gradient_clip_val,
                                gradient_clip_algorithm="norm")
            d_opt.step()  # expect: TML002
            d_sch.step()
